//! Copies to and from the calling process's memory through pointers found
//! inside ioctl arguments, with the kernel's `copy_from_user` /
//! `copy_to_user` behaviour: a bad pointer is `EFAULT`, never a crash.
//! In local mode the caller is this very process, so the copies go through
//! `process_vm_readv`/`process_vm_writev` on ourselves, which check the
//! address range the way the kernel does.

use crate::Errno;

pub fn read(addr: u64, out: &mut [u8]) -> Result<(), Errno> {
    if out.is_empty() {
        return Ok(());
    }
    if addr == 0 {
        return Err(Errno::EFAULT);
    }
    let local = libc::iovec {
        iov_base: out.as_mut_ptr().cast(),
        iov_len: out.len(),
    };
    let remote = libc::iovec {
        iov_base: addr as *mut libc::c_void,
        iov_len: out.len(),
    };
    // SAFETY: both iovecs describe valid lengths; the kernel checks the
    // remote range and fails with EFAULT instead of touching bad memory.
    let n = unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) };
    if n == out.len() as isize {
        Ok(())
    } else {
        Err(Errno::EFAULT)
    }
}

pub fn write(addr: u64, data: &[u8]) -> Result<(), Errno> {
    if data.is_empty() {
        return Ok(());
    }
    if addr == 0 {
        return Err(Errno::EFAULT);
    }
    let local = libc::iovec {
        iov_base: data.as_ptr() as *mut libc::c_void,
        iov_len: data.len(),
    };
    let remote = libc::iovec {
        iov_base: addr as *mut libc::c_void,
        iov_len: data.len(),
    };
    // SAFETY: as in `read`; the local buffer is only read by the kernel.
    let n = unsafe { libc::process_vm_writev(libc::getpid(), &local, 1, &remote, 1, 0) };
    if n == data.len() as isize {
        Ok(())
    } else {
        Err(Errno::EFAULT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_and_faults() {
        let src = [1u8, 2, 3, 4];
        let mut dst = [0u8; 4];
        read(src.as_ptr() as u64, &mut dst).unwrap();
        assert_eq!(dst, src);
        let mut target = [0u8; 4];
        write(target.as_mut_ptr() as u64, &[9, 8, 7, 6]).unwrap();
        assert_eq!(target, [9, 8, 7, 6]);
        assert_eq!(read(0, &mut dst), Err(Errno::EFAULT));
        assert_eq!(read(8, &mut dst), Err(Errno::EFAULT));
        assert_eq!(write(0xffff_0000_0000_0000, &[1]), Err(Errno::EFAULT));
    }
}
