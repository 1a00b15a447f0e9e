/* rocjitsu execution plugins: the C ABI `rocjitsu_plugin_v1`.
 *
 * A plugin is a shared library (a Rust `cdylib`, or C/C++) loaded by path:
 *   rocjitsu --plugin path/to/libfoo.so[:key=value,...] -- APP
 *   rocjitsu run-kernel ... --plugin path/to/libfoo.so[:key=value,...]
 *   ROCJITSU_PLUGINS="path/to/libfoo.so:key=value"
 * It exports one function, `rocjitsu_plugin_v1`, returning a table that lives
 * as long as the library. Every struct starts with its size in bytes; a newer
 * emulator only appends fields, so a plugin reads what its own header knows.
 *
 * Threads: a dispatch's workgroups run on several host threads. `worker`
 * is called once per thread and dispatch; the events of that thread go to the
 * worker context it returned, from that thread only, so a worker needs no
 * lock. `worker_end` runs on the same thread when it leaves the dispatch;
 * `dispatch_end` after every worker has ended. `create`, `finish` and
 * `destroy` run once per process. Events are delivered before the
 * instruction executes. Pointers passed in are valid during the call only.
 * A callback left NULL is not called; one that is not needed should be NULL
 * (instruction and memory events cost time when any plugin wants them).
 */
#ifndef ROCJITSU_PLUGIN_H
#define ROCJITSU_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ROCJITSU_PLUGIN_ABI_VERSION 1

/* rocjitsu_inst_v1.family */
enum rocjitsu_family {
  ROCJITSU_FAMILY_SALU = 0,
  ROCJITSU_FAMILY_VALU = 1,
  ROCJITSU_FAMILY_MFMA = 2,
  ROCJITSU_FAMILY_SMEM = 3,
  ROCJITSU_FAMILY_VMEM_LOAD = 4,
  ROCJITSU_FAMILY_VMEM_STORE = 5,
  ROCJITSU_FAMILY_VMEM_ATOMIC = 6,
  ROCJITSU_FAMILY_LDS = 7,
  ROCJITSU_FAMILY_BRANCH = 8,
  ROCJITSU_FAMILY_WAIT = 9,
  ROCJITSU_FAMILY_BARRIER = 10,
  ROCJITSU_FAMILY_OTHER = 11,
};

/* rocjitsu_mem_v1.kind */
enum rocjitsu_mem_kind { ROCJITSU_MEM_LOAD = 1, ROCJITSU_MEM_STORE = 2, ROCJITSU_MEM_ATOMIC = 3 };

/* rocjitsu_mem_v1.space[] */
enum rocjitsu_space { ROCJITSU_SPACE_GLOBAL = 0, ROCJITSU_SPACE_LDS = 1, ROCJITSU_SPACE_SCRATCH = 2, ROCJITSU_SPACE_GDS = 3 };

/* rocjitsu_plugin_v1.wants */
#define ROCJITSU_WANTS_INSTRUCTIONS 1u
#define ROCJITSU_WANTS_MEMORY 2u

typedef struct rocjitsu_dispatch_v1 {
  uint32_t size;        /* sizeof(rocjitsu_dispatch_v1) of the emulator */
  uint32_t threads;     /* host threads the dispatch runs on */
  uint64_t seq;         /* dispatches this plugin has seen before this one */
  const char *kernel;   /* NUL-terminated */
  const char *target;   /* "gfx90a", "gfx942", "gfx950" */
  uint64_t entry;       /* address of the kernel's first instruction */
  uint32_t grid[3];     /* workgroups per dimension */
  uint32_t block[3];    /* work-items per workgroup */
} rocjitsu_dispatch_v1;

typedef struct rocjitsu_inst_v1 {
  uint32_t size;
  uint32_t wave;          /* wave index in the workgroup */
  uint32_t group[3];      /* workgroup id */
  uint32_t family;        /* enum rocjitsu_family */
  uint64_t pc;
  uint64_t exec;          /* EXEC before the instruction */
  const char *mnemonic;   /* LLVM's; valid while the calling thread lives */
  uint32_t bytes;         /* instruction size */
  uint32_t reserved;
} rocjitsu_inst_v1;

typedef struct rocjitsu_mem_v1 {
  uint32_t size;
  uint32_t wave;
  uint32_t group[3];
  uint32_t kind;          /* enum rocjitsu_mem_kind */
  uint64_t pc;
  uint64_t exec;          /* lanes that access memory */
  uint32_t bytes;         /* per active lane (per wave for scalar memory) */
  uint32_t scalar;        /* 1: scalar memory, one access per wave (lane 0's address) */
  const uint64_t *addr;   /* 64 addresses (LDS: offsets) */
  const uint8_t *space;   /* 64 spaces (enum rocjitsu_space) */
} rocjitsu_mem_v1;

typedef struct rocjitsu_end_v1 {
  uint32_t size;
  uint32_t faulted;       /* 1 when the dispatch faulted or was stopped */
  uint64_t instructions;  /* wave-instructions */
  uint64_t waves;
  double wall_s;
} rocjitsu_end_v1;

typedef struct rocjitsu_plugin_v1 {
  uint32_t abi_version;   /* ROCJITSU_PLUGIN_ABI_VERSION */
  uint32_t size;          /* sizeof(rocjitsu_plugin_v1) */
  const char *name;       /* for messages */
  uint32_t wants;         /* ROCJITSU_WANTS_* */
  uint32_t reserved;
  /* Once per process: `options` is the spec's "key=value,..." (may be "").
   * Returns the plugin's context, or NULL after writing why (NUL-terminated,
   * at most err_len bytes) to `err`: the option is then refused. */
  void *(*create)(const char *options, char *err, size_t err_len);
  /* A dispatch starts: returns its context (passed to worker, dispatch_end). */
  void *(*dispatch)(void *plugin, const rocjitsu_dispatch_v1 *d);
  /* A host thread joins the dispatch: returns its worker context. */
  void *(*worker)(void *dispatch, uint32_t slot);
  void (*instruction)(void *worker, const rocjitsu_inst_v1 *i);
  void (*memory)(void *worker, const rocjitsu_mem_v1 *m);
  void (*worker_end)(void *worker);
  void (*dispatch_end)(void *dispatch, const rocjitsu_end_v1 *e);
  /* The process is done with the GPU (write summaries here). */
  void (*finish)(void *plugin);
  void (*destroy)(void *plugin);
} rocjitsu_plugin_v1;

/* The one symbol a plugin exports. */
const rocjitsu_plugin_v1 *rocjitsu_plugin_v1(void);

#ifdef __cplusplus
}
#endif
#endif
