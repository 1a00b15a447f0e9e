// A hand-written kernel whose execution counts are known (crates/cli/tests/it/run_kernel.rs,
// coverage_counts_a_hand_written_kernel): a loop of 5 iterations, a branch
// half of the waves skip, a block no wave reaches.
	.amdgcn_target "amdgcn-amd-amdhsa--gfx942"
	.text
	.globl	counted
	.p2align	8
	.type	counted,@function
counted:
	s_mov_b32 s2, 0
.Lloop:
	s_add_u32 s2, s2, 1
	s_cmp_lt_u32 s2, 5
	s_cbranch_scc1 .Lloop
	v_cmp_gt_u32_e32 vcc, 32, v0
	s_and_saveexec_b64 s[4:5], vcc
	s_cbranch_execz .Lskip
	v_mov_b32_e32 v1, 1
.Lskip:
	s_or_b64 exec, exec, s[4:5]
	s_cmp_eq_u32 s2, 7
	s_cbranch_scc1 .Lnever
	s_endpgm
.Lnever:
	s_nop 0
	s_endpgm
.Lend:
	.size	counted, .Lend-counted

	.rodata
	.p2align	6
	.amdhsa_kernel counted
		.amdhsa_next_free_vgpr 2
		.amdhsa_next_free_sgpr 8
		.amdhsa_accum_offset 4
	.end_amdhsa_kernel

	.amdgpu_metadata
---
amdhsa.kernels:
  - .name: counted
    .symbol: counted.kd
    .kernarg_segment_size: 0
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .wavefront_size: 64
    .sgpr_count: 8
    .vgpr_count: 2
    .max_flat_workgroup_size: 256
amdhsa.version: [1, 2]
...
	.end_amdgpu_metadata
