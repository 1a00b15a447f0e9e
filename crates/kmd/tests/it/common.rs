//! Helpers the driver's integration tests share: KFD ioctl request numbers
//! and little-endian fields of argument structures.
#![allow(dead_code)]

pub fn iowr(nr: u64, size: u64) -> u64 {
    (3 << 30) | (size << 16) | (u64::from(b'K') << 8) | nr
}
pub fn iow(nr: u64, size: u64) -> u64 {
    (1 << 30) | (size << 16) | (u64::from(b'K') << 8) | nr
}
pub fn ior(nr: u64, size: u64) -> u64 {
    (2 << 30) | (size << 16) | (u64::from(b'K') << 8) | nr
}
pub fn put32(b: &mut [u8], o: usize, v: u32) {
    b[o..o + 4].copy_from_slice(&v.to_le_bytes());
}
pub fn put64(b: &mut [u8], o: usize, v: u64) {
    b[o..o + 8].copy_from_slice(&v.to_le_bytes());
}
pub fn get32(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes(b[o..o + 4].try_into().unwrap())
}
pub fn get64(b: &[u8], o: usize) -> u64 {
    u64::from_le_bytes(b[o..o + 8].try_into().unwrap())
}

/// An anonymous PROT_NONE reservation of `size` bytes, as the thunk makes
/// before it allocates GPU memory there (owned by the test).
pub fn reserve(size: usize) -> u64 {
    // SAFETY: a new reservation, overlapping nothing.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            size,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    assert_ne!(p, libc::MAP_FAILED, "reserving {size} bytes");
    p as u64
}

/// ALLOC_MEMORY_OF_GPU's argument for `size` bytes of writable, public
/// VRAM at `va` on `gpu_id`.
pub fn vram_args(va: u64, size: u64, gpu_id: u32) -> [u8; 40] {
    let mut a = [0u8; 40];
    put64(&mut a, 0, va);
    put64(&mut a, 8, size);
    put32(&mut a, 32, gpu_id);
    put32(&mut a, 36, 0x8000_0001 | 1 << 29); // VRAM | WRITABLE | PUBLIC
    a
}
