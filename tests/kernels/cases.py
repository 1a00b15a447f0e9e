"""The executed-kernel cases, by family; importing this module fills
harness.REGISTRY. See harness.py for the case model and scripts/kernels.py
for how they are built and run."""

import cases_elementwise  # noqa: F401
import cases_images  # noqa: F401
import cases_faults  # noqa: F401
import cases_math  # noqa: F401
import cases_misc  # noqa: F401
import cases_parallel  # noqa: F401
import cases_programs  # noqa: F401
import cases_scan  # noqa: F401
import cases_triton  # noqa: F401
