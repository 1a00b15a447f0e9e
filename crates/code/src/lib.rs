//! AMDGPU code objects: ELF64 code objects (v4, v5, v6) with their
//! `NT_AMDGPU_METADATA` note and kernel descriptors, and the containers they
//! ship in (clang offload bundles, compressed bundles, HIP fat binaries).
//!
//! Entry points: [`Container::parse`] for any file, then
//! [`Container::select`] for a target's [`CodeObject`]; or
//! [`CodeObject::parse`] for a bare code object. Every error names the
//! file, the section and the byte offset.

pub mod bundle;
pub mod descriptor;
pub mod elf;
pub mod error;
mod mach_table;
pub mod metadata;
pub mod msgpack;
pub mod object;

pub use bundle::{BundleId, Container, ContainerKind, Entry, FatbinWrapper};
pub use descriptor::KernelDescriptor;
pub use elf::{AmdgpuFlags, FeatureState};
pub use error::{Error, ErrorKind, Result};
pub use metadata::{KernelArg, KernelMeta, Metadata, ValueKind};
pub use object::{CodeObject, Function, Kernel, Text};

#[cfg(test)]
mod tests;
