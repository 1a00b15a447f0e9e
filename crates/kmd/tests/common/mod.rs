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
