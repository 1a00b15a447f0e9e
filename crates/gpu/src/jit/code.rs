//! Executable memory for translated blocks: each block's machine code is
//! copied into a private anonymous mapping, which is then made read+execute
//! (never writable and executable at once) and unmapped when the block is
//! dropped.

/// One block's machine code, mapped read+execute.
pub struct ExecMem {
    ptr: *mut libc::c_void,
    len: usize,
}

// SAFETY: the mapping is immutable after `new` returns (read+execute only);
// sharing or moving the owner between threads reads nothing mutable.
unsafe impl Send for ExecMem {}
// SAFETY: as above; `&ExecMem` gives only the address of immutable code.
unsafe impl Sync for ExecMem {}

impl ExecMem {
    /// Maps `code` read+execute.
    pub fn new(code: &[u8]) -> std::io::Result<ExecMem> {
        // SAFETY: sysconf has no memory effects.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
        let len = code.len().max(1).next_multiple_of(page);
        // SAFETY: a fresh private anonymous mapping; the result is checked.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let mem = ExecMem { ptr, len };
        // SAFETY: `ptr` is a writable mapping of `len >= code.len()` bytes
        // that nothing else refers to yet.
        unsafe { std::ptr::copy_nonoverlapping(code.as_ptr(), ptr.cast::<u8>(), code.len()) };
        // SAFETY: `ptr`/`len` are the mapping made above.
        if unsafe { libc::mprotect(ptr, len, libc::PROT_READ | libc::PROT_EXEC) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(mem)
    }

    /// The address of the first byte of code.
    pub fn addr(&self) -> *const u8 {
        self.ptr.cast::<u8>().cast_const()
    }
}

impl Drop for ExecMem {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, unmapped once; no block
        // function of it runs any more (its owner is being dropped).
        unsafe { libc::munmap(self.ptr, self.len) };
    }
}
