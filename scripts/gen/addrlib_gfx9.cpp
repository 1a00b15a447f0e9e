// The address oracle of scripts/gen/addrlib_gfx9.sh: prints the byte offsets AMD's addrlib
// (ROCr 5.2.3's copy) gives texels of 2D tiled surfaces, ROCr's choice of swizzle mode or a given one.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include "addrinterface.h"
#include "amdgpu_asic_addr.h"
using namespace rocr;
static void* ADDR_API alloc_(const ADDR_ALLOCSYSMEM_INPUT* in) { return malloc(in->sizeInBytes); }
static ADDR_E_RETURNCODE ADDR_API free_(const ADDR_FREESYSMEM_INPUT* in) { free(in->pVirtAddr); return ADDR_OK; }
int main(int argc, char** argv) {
  unsigned gb = strtoul(argv[1], 0, 0);
  ADDR_CREATE_INPUT ci = {}; ADDR_CREATE_OUTPUT co = {};
  ci.size = sizeof(ci); co.size = sizeof(co);
  ci.chipEngine = 0xD;
  ci.chipFamily = 141; // FAMILY_AI
  ci.chipRevision = 0;
  ci.createFlags.useTileIndex = 1;
  ci.callbacks.allocSysMem = alloc_; ci.callbacks.freeSysMem = free_;
  ci.regValue.gbAddrConfig = gb;
  if (AddrCreate(&ci, &co) != ADDR_OK) { fprintf(stderr, "AddrCreate failed\n"); return 1; }
  ADDR_HANDLE lib = co.hLib;
  // width height slices bpp
  for (int a = 2; a + 4 < argc; a += 5) {
    unsigned w = atoi(argv[a]), h = atoi(argv[a+1]), s = atoi(argv[a+2]), bpp = atoi(argv[a+3]);
    int mode = atoi(argv[a+4]);
    ADDR2_GET_PREFERRED_SURF_SETTING_INPUT pi = {}; ADDR2_GET_PREFERRED_SURF_SETTING_OUTPUT po = {};
    pi.size = sizeof(pi); po.size = sizeof(po);
    pi.flags.texture = 1; pi.bpp = bpp; pi.format = ADDR_FMT_INVALID; pi.width = w; pi.height = h;
    pi.numSlices = s; pi.resourceLoction = ADDR_RSRC_LOC_UNDEF; pi.resourceType = ADDR_RSRC_TEX_2D;
    pi.forbiddenBlock.micro = 1; pi.forbiddenBlock.var = 1;
    if (Addr2GetPreferredSurfaceSetting(lib, &pi, &po) != ADDR_OK) { fprintf(stderr, "pref failed\n"); return 1; }
    ADDR2_COMPUTE_SURFACE_INFO_INPUT si = {}; ADDR2_COMPUTE_SURFACE_INFO_OUTPUT so = {};
    si.size = sizeof(si); so.size = sizeof(so);
    si.flags.texture = 1; si.bpp = bpp; si.width = w; si.height = h; si.numSlices = s;
    if (mode >= 0) po.swizzleMode = (AddrSwizzleMode)mode;
    si.resourceType = ADDR_RSRC_TEX_2D; si.swizzleMode = po.swizzleMode;
    if (Addr2ComputeSurfaceInfo(lib, &si, &so) != ADDR_OK) { fprintf(stderr, "info failed\n"); return 1; }
    printf("surface %u %u %u %u %u %u", w, h, s, bpp / 8, (unsigned)po.swizzleMode, so.pitch);
    for (unsigned z = 0; z < s; z++) for (unsigned y = 0; y < h; y++) for (unsigned x = 0; x < w; x++) {
      // A sample of the texels: the first 4x4 of slice 0 and every 17th beyond.
      if (!((x < 4 && y < 4 && z == 0) || (x * 5 + y * 3 + z) % 17 == 0)) continue;
      ADDR2_COMPUTE_SURFACE_ADDRFROMCOORD_INPUT ai = {}; ADDR2_COMPUTE_SURFACE_ADDRFROMCOORD_OUTPUT ao = {};
      ai.size = sizeof(ai); ao.size = sizeof(ao);
      ai.x = x; ai.y = y; ai.slice = z; ai.swizzleMode = po.swizzleMode; ai.flags.texture = 1;
      ai.resourceType = ADDR_RSRC_TEX_2D; ai.bpp = bpp; ai.unalignedWidth = w; ai.unalignedHeight = h;
      ai.numSlices = s; ai.numMipLevels = 1; ai.numSamples = 1; ai.numFrags = 1; ai.pitchInElement = so.pitch;
      if (Addr2ComputeSurfaceAddrFromCoord(lib, &ai, &ao) != ADDR_OK) { fprintf(stderr, "addr failed\n"); return 1; }
      printf(" %llx", (unsigned long long)ao.addr);
    }
    printf("\n");
  }
  AddrDestroy(lib);
}
