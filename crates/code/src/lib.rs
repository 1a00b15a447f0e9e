//! AMDGPU code objects.
