/* Looks up the C library's mmap through a dlopen handle, as Python's
 * ctypes.CDLL("libc.so.6").mmap does (tinygrad's direct-to-KFD runtime),
 * and maps KFD's doorbell page with it; checks that dlsym keeps its answers
 * for RTLD_NEXT, for names the interposer does not define and for failed
 * lookups. Prints "ok" and exits 0, or names the first check that failed
 * and exits 1. Run under `rocjitsu --config CONFIG --`. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef void *(*mmap_fn)(void *, size_t, int, int, int, off_t);

static int fail(const char *what) {
  printf("FAIL %s\n", what);
  return 1;
}

int main(void) {
  void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_LOCAL);
  if (!libc) return fail("dlopen libc.so.6");
  mmap_fn by_handle = (mmap_fn)dlsym(libc, "mmap");
  mmap_fn global = (mmap_fn)dlsym(RTLD_DEFAULT, "mmap");
  mmap_fn next = (mmap_fn)dlsym(RTLD_NEXT, "mmap");
  if (!by_handle || by_handle != global)
    return fail("dlsym(libc handle, mmap) is not the mmap the program's calls bind to");
  if (next != global)
    return fail("dlsym(RTLD_NEXT, mmap) from the program is not the interposer's");

  /* A name the interposer does not define: the library's own, no error. */
  dlerror();
  void *getpid_h = dlsym(libc, "getpid");
  if (!getpid_h || dlerror() != NULL)
    return fail("dlsym(libc handle, getpid) failed or left an error");
  if (dlsym(libc, "no_such_symbol_rocjitsu") != NULL || dlerror() == NULL)
    return fail("a failed lookup did not fail with an error");

  FILE *f = fopen("/sys/devices/virtual/kfd/kfd/topology/nodes/1/gpu_id", "r");
  unsigned gpu_id = 0;
  if (!f || fscanf(f, "%u", &gpu_id) != 1 || gpu_id == 0) return fail("reading node 1's gpu_id");
  fclose(f);
  int kfd = open("/dev/kfd", O_RDWR | O_CLOEXEC);
  if (kfd < 0) return fail("open /dev/kfd");
  /* KFD_MMAP_TYPE_DOORBELL | gpu_id << KFD_MMAP_GPU_ID_SHIFT */
  off_t off = (off_t)((3ULL << 62) | ((uint64_t)gpu_id << 46));
  volatile uint64_t *db = by_handle(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, kfd, off);
  if (db == MAP_FAILED) return fail("mmap of the doorbell page through the libc handle");
  db[0] = 0x1234;
  if (db[0] != 0x1234) return fail("the doorbell page does not keep a write");
  puts("ok");
  return 0;
}
