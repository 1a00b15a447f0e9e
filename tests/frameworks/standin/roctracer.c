/* A stand-in for libroctracer64.so.4, which Debian does not package (its
 * roctracer source package builds only roctx). CuPy for ROCm links it and
 * resolves roctracer_start and roctracer_stop (its profiler's start/stop);
 * ONNX Runtime's ROCm provider links it and resolves nothing from it. The
 * tests never profile: both functions do nothing, as roctracer does when no
 * activity is enabled. Built by scripts/frameworks.py, never installed into
 * the system library path. */
void roctracer_start(void) {}
void roctracer_stop(void) {}
