// DBT guest mode through the raw HSA API, with a file-backed code object
// reader: the program sees one GPU agent (gfx950, gfx950 ISA), loads a
// gfx950 code object from a file with hsa_code_object_reader_create_from_file
// (closing the file right after), finds the kernel by name on that agent,
// checks the symbol's agent is the one it was given, dispatches it with an
// AQL packet on a queue of that agent and checks the results.
//   hsa_file_reader CODE_OBJECT   -> "PASS hsa_file_reader" (exit 0) or "FAIL ..." (exit 1)
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

#define CHECK(x)                                                        \
  do {                                                                  \
    hsa_status_t s_ = (x);                                              \
    if (s_ != HSA_STATUS_SUCCESS) {                                     \
      const char* m_ = "?";                                             \
      hsa_status_string(s_, &m_);                                       \
      printf("FAIL hsa_file_reader: %s: %#x %s\n", #x, (unsigned)s_, m_); \
      return 1;                                                         \
    }                                                                   \
  } while (0)

struct Found {
  hsa_agent_t gpu{}, cpu{};
  int gpus = 0, cpus = 0;
  hsa_amd_memory_pool_t kernarg{}, fine{};
};

static hsa_status_t on_agent(hsa_agent_t a, void* data) {
  auto* f = static_cast<Found*>(data);
  hsa_device_type_t t;
  hsa_agent_get_info(a, HSA_AGENT_INFO_DEVICE, &t);
  if (t == HSA_DEVICE_TYPE_GPU) {
    f->gpus++;
    f->gpu = a;
  } else if (t == HSA_DEVICE_TYPE_CPU && f->cpus++ == 0) {
    f->cpu = a;
  }
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t on_pool(hsa_amd_memory_pool_t p, void* data) {
  auto* f = static_cast<Found*>(data);
  hsa_amd_segment_t seg;
  hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &seg);
  if (seg != HSA_AMD_SEGMENT_GLOBAL) return HSA_STATUS_SUCCESS;
  uint32_t flags = 0;
  hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags);
  if ((flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT) && !f->kernarg.handle) f->kernarg = p;
  if ((flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED) && !f->fine.handle) f->fine = p;
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t first_isa(hsa_isa_t isa, void* data) {
  *static_cast<hsa_isa_t*>(data) = isa;
  return HSA_STATUS_INFO_BREAK;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    printf("usage: hsa_file_reader CODE_OBJECT\n");
    return 2;
  }
  CHECK(hsa_init());
  Found f;
  CHECK(hsa_iterate_agents(on_agent, &f));
  if (f.gpus != 1) {
    printf("FAIL hsa_file_reader: %d GPU agents, expected 1\n", f.gpus);
    return 1;
  }
  char name[64] = {};
  CHECK(hsa_agent_get_info(f.gpu, HSA_AGENT_INFO_NAME, name));
  hsa_isa_t isa{};
  hsa_agent_iterate_isas(f.gpu, first_isa, &isa);
  char isa_name[128] = {};
  CHECK(hsa_isa_get_info_alt(isa, HSA_ISA_INFO_NAME, isa_name));
  if (strcmp(name, "gfx950") != 0 || !strstr(isa_name, "gfx950")) {
    printf("FAIL hsa_file_reader: the GPU agent is %s (ISA %s), expected gfx950\n", name, isa_name);
    return 1;
  }

  int fd = open(argv[1], O_RDONLY);
  if (fd < 0) {
    printf("FAIL hsa_file_reader: cannot open %s\n", argv[1]);
    return 1;
  }
  hsa_code_object_reader_t reader;
  CHECK(hsa_code_object_reader_create_from_file(fd, &reader));
  close(fd);
  hsa_executable_t exe;
  CHECK(hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, "", &exe));
  CHECK(hsa_executable_load_agent_code_object(exe, f.gpu, reader, "", nullptr));
  CHECK(hsa_executable_freeze(exe, ""));
  hsa_executable_symbol_t sym;
  CHECK(hsa_executable_get_symbol_by_name(exe, "add_one.kd", &f.gpu, &sym));
  hsa_agent_t sym_agent{};
  CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_AGENT, &sym_agent));
  if (sym_agent.handle != f.gpu.handle) {
    printf("FAIL hsa_file_reader: the symbol's agent %#lx is not the GPU agent %#lx\n",
           (unsigned long)sym_agent.handle, (unsigned long)f.gpu.handle);
    return 1;
  }
  uint64_t kernel_object = 0;
  uint32_t kernarg_size = 0, group = 0, priv = 0;
  CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &kernel_object));
  CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE, &kernarg_size));
  CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE, &group));
  CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE, &priv));

  CHECK(hsa_amd_agent_iterate_memory_pools(f.cpu, on_pool, &f));
  if (!f.kernarg.handle || !f.fine.handle) {
    printf("FAIL hsa_file_reader: no kernarg or fine-grained system pool\n");
    return 1;
  }
  const int n = 256;
  int* data = nullptr;
  void* args = nullptr;
  CHECK(hsa_amd_memory_pool_allocate(f.fine, n * sizeof(int), 0, (void**)&data));
  CHECK(hsa_amd_memory_pool_allocate(f.kernarg, kernarg_size < 8 ? 8 : kernarg_size, 0, &args));
  CHECK(hsa_amd_agents_allow_access(1, &f.gpu, nullptr, data));
  CHECK(hsa_amd_agents_allow_access(1, &f.gpu, nullptr, args));
  for (int i = 0; i < n; i++) data[i] = 3 * i;
  memset(args, 0, kernarg_size);
  memcpy(args, &data, sizeof(data));

  hsa_queue_t* q = nullptr;
  CHECK(hsa_queue_create(f.gpu, 64, HSA_QUEUE_TYPE_SINGLE, nullptr, nullptr, UINT32_MAX, UINT32_MAX, &q));
  hsa_signal_t done;
  CHECK(hsa_signal_create(1, 0, nullptr, &done));
  uint64_t idx = hsa_queue_add_write_index_relaxed(q, 1);
  auto* pkt = static_cast<hsa_kernel_dispatch_packet_t*>(q->base_address) + (idx % q->size);
  memset(reinterpret_cast<uint8_t*>(pkt) + 4, 0, sizeof(*pkt) - 4);
  pkt->setup = 1 << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS;
  pkt->workgroup_size_x = 64;
  pkt->workgroup_size_y = 1;
  pkt->workgroup_size_z = 1;
  pkt->grid_size_x = n;
  pkt->grid_size_y = 1;
  pkt->grid_size_z = 1;
  pkt->kernel_object = kernel_object;
  pkt->kernarg_address = args;
  pkt->private_segment_size = priv;
  pkt->group_segment_size = group;
  pkt->completion_signal = done;
  uint16_t header = (HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE) |
                    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) |
                    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE);
  __atomic_store_n(reinterpret_cast<uint16_t*>(pkt), header, __ATOMIC_RELEASE);
  hsa_signal_store_screlease(q->doorbell_signal, idx);
  if (hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_LT, 1, 60ull * 1000 * 1000 * 1000,
                                HSA_WAIT_STATE_BLOCKED) != 0) {
    printf("FAIL hsa_file_reader: the dispatch did not complete\n");
    return 1;
  }
  for (int i = 0; i < n; i++) {
    if (data[i] != 3 * i + 1) {
      printf("FAIL hsa_file_reader: data[%d] = %d, expected %d\n", i, data[i], 3 * i + 1);
      return 1;
    }
  }
  CHECK(hsa_queue_destroy(q));
  CHECK(hsa_signal_destroy(done));
  CHECK(hsa_executable_destroy(exe));
  CHECK(hsa_code_object_reader_destroy(reader));
  CHECK(hsa_amd_memory_pool_free(data));
  CHECK(hsa_amd_memory_pool_free(args));
  CHECK(hsa_shut_down());
  printf("PASS hsa_file_reader\n");
  return 0;
}
