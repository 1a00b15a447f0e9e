//! Loads and stores: to and from VGPRs/AGPRs, and loads into LDS
//! (`global_load_lds_*`, `scratch_load_lds_*`, MUBUF with `lds`).

use super::addr::{Addrs, addrs};
use super::{Space, ld, read, seg, st, write};
use crate::exec::lds;
use crate::exec::op::{Ctx, Fault, Op};
use crate::exec::wave::Src;

/// Whether all 64 lanes access one contiguous global range, lane `l` at
/// `a[0] + l * total`, entirely in range: such an access is one copy. A
/// flat range qualifies when it lies outside the LDS and private
/// apertures.
#[inline]
fn coalesced(c: &Ctx, ad: &Addrs, exec: u64, total: usize) -> bool {
    let global = match ad.space {
        Space::Global => true,
        Space::Flat => {
            let (lo, len) = (ad.a[0], 64 * total as u64);
            let ap = &c.env.apertures;
            let clear =
                |base: u64| lo.saturating_add(len) <= base || lo >= base.saturating_add(1 << 32);
            clear(ap.shared_base) && clear(ap.private_base)
        }
        Space::Private => false,
    };
    exec == u64::MAX
        && global
        && ad.limit.iter().all(|&x| x >= total as u64)
        && ad
            .a
            .iter()
            .enumerate()
            .all(|(l, &a)| a == ad.a[0].wrapping_add((l * total) as u64))
}

/// Loads `N` elements of kind `K` per active lane into `vdst..`. Lanes
/// whose element is out of a buffer's range read 0.
pub(crate) fn load<const SEG: u8, const K: u8, const N: usize>(
    c: &mut Ctx,
    op: &Op,
) -> Result<(), Fault> {
    let exec = c.wave.exec();
    if exec == 0 {
        return Ok(());
    }
    let ad = addrs::<SEG>(c, op);
    let size = ld::size(K);
    let total = size * N;
    let mut out = [[0u32; 64]; N];
    if K == ld::B32 && coalesced(c, &ad, exec, total) {
        let mut buf = [0u8; 64 * 16];
        // A fault of the whole range is re-run lane by lane below, which
        // reports the first faulting lane's address.
        if c.vm.load(c.tlb, ad.a[0], &mut buf[..64 * total]).is_ok() {
            for (k, o) in out.iter_mut().enumerate() {
                for (l, v) in o.iter_mut().enumerate() {
                    let at = l * total + 4 * k;
                    *v = u32::from_le_bytes([buf[at], buf[at + 1], buf[at + 2], buf[at + 3]]);
                }
            }
            for (k, o) in out.iter().enumerate() {
                c.wave.write_v(op.vdst.wrapping_add(k as u16), o, exec);
            }
            return Ok(());
        }
    }
    // The lanes read from the last down, the opposite of the order stores
    // write them in (see `Vm::load`).
    for l in (0..64).rev() {
        if exec >> l & 1 == 0 {
            continue;
        }
        let mut buf = [0u8; 16];
        if ad.limit[l] >= total as u64 {
            read(c, ad.space, l, ad.a[l], &mut buf[..total])?;
        } else {
            for k in (0..N).rev() {
                let at = k * size;
                if ad.limit[l] >= (at + size) as u64 {
                    read(
                        c,
                        ad.space,
                        l,
                        ad.a[l].wrapping_add(at as u64),
                        &mut buf[at..at + size],
                    )?;
                }
            }
        }
        for (k, o) in out.iter_mut().enumerate() {
            let mut w = [0u8; 4];
            w[..size].copy_from_slice(&buf[k * size..k * size + size]);
            let raw = u32::from_le_bytes(w);
            o[l] = if K == ld::B32 {
                raw
            } else {
                ld::merge(
                    K,
                    raw,
                    c.env
                        .d16_keep(c.wave.vreg(op.vdst.wrapping_add(k as u16))[l]),
                )
            };
        }
    }
    for (k, o) in out.iter().enumerate() {
        c.wave.write_v(op.vdst.wrapping_add(k as u16), o, exec);
    }
    Ok(())
}

/// Stores `N` elements of kind `K` per active lane from `src[1]..`. Out of
/// range buffer elements are dropped.
pub(crate) fn store<const SEG: u8, const K: u8, const N: usize>(
    c: &mut Ctx,
    op: &Op,
) -> Result<(), Fault> {
    let exec = c.wave.exec();
    if exec == 0 {
        return Ok(());
    }
    let ad = addrs::<SEG>(c, op);
    let Src::V(d) = op.src[1] else { return Ok(()) };
    let size = st::size(K);
    let total = size * N;
    if K == st::B32 && coalesced(c, &ad, exec, total) {
        let mut buf = [0u8; 64 * 16];
        for k in 0..N {
            let r = c.wave.vreg(d.wrapping_add(k as u16));
            for (l, v) in r.iter().enumerate() {
                let at = l * total + 4 * k;
                buf[at..at + 4].copy_from_slice(&v.to_le_bytes());
            }
        }
        if c.vm.store(c.tlb, ad.a[0], &buf[..64 * total]).is_ok() {
            return Ok(());
        }
    }
    for l in 0..64 {
        if exec >> l & 1 == 0 {
            continue;
        }
        let mut buf = [0u8; 16];
        for k in 0..N {
            let v = st::value(K, c.wave.vreg(d.wrapping_add(k as u16))[l]);
            buf[k * size..k * size + size].copy_from_slice(&v.to_le_bytes()[..size]);
        }
        if ad.limit[l] >= total as u64 {
            write(c, ad.space, l, ad.a[l], &buf[..total])?;
        } else {
            for k in 0..N {
                let at = k * size;
                if ad.limit[l] >= (at + size) as u64 {
                    write(
                        c,
                        ad.space,
                        l,
                        ad.a[l].wrapping_add(at as u64),
                        &buf[at..at + size],
                    )?;
                }
            }
        }
    }
    Ok(())
}

/// The instruction offset a load-to-LDS adds to the LDS address (the
/// buffer form keeps flags above the 12-bit offset in `imm`).
fn lds_inst_offset<const SEG: u8>(op: &Op) -> u64 {
    if SEG == seg::BUFFER {
        (op.imm & 0xfff) as u64
    } else {
        op.imm as u64
    }
}

/// Loads into LDS instead of VGPRs: lane `l`'s data (extended to a dword
/// for byte and short loads) goes to LDS at `M0 + offset + l * size`, size
/// 4 bytes, or 12 / 16 for the dwordx3 / dwordx4 forms (ISA manual,
/// "Global Load LDS" / "LDS DMA"). Only active lanes write.
pub(crate) fn load_lds<const SEG: u8, const K: u8, const N: usize>(
    c: &mut Ctx,
    op: &Op,
) -> Result<(), Fault> {
    let exec = c.wave.exec();
    if exec == 0 {
        return Ok(());
    }
    let ad = addrs::<SEG>(c, op);
    let size = ld::size(K);
    let stride = 4 * N as u64;
    let lds_base = u64::from(c.wave.m0()).wrapping_add(lds_inst_offset::<SEG>(op));
    for l in 0..64 {
        if exec >> l & 1 == 0 {
            continue;
        }
        let mut buf = [0u8; 16];
        for k in 0..N {
            let at = k * size;
            if ad.limit[l] >= (at + size) as u64 {
                read(
                    c,
                    ad.space,
                    l,
                    ad.a[l].wrapping_add(at as u64),
                    &mut buf[at..at + size],
                )?;
            }
        }
        let mut dw = [0u8; 16];
        for k in 0..N {
            let mut w = [0u8; 4];
            w[..size].copy_from_slice(&buf[k * size..k * size + size]);
            let v = ld::merge(K, u32::from_le_bytes(w), 0);
            dw[4 * k..4 * k + 4].copy_from_slice(&v.to_le_bytes());
        }
        lds::write_bytes(c, lds_base + l as u64 * stride, &dw[..4 * N]);
    }
    Ok(())
}

/// `buffer_store_lds_dword`: stores the dword at LDS `M0 + offset + l * 4`
/// of each active lane to the lane's buffer address.
pub(crate) fn store_from_lds(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let exec = c.wave.exec();
    let ad = addrs::<{ seg::BUFFER }>(c, op);
    let lds_base = u64::from(c.wave.m0()).wrapping_add(lds_inst_offset::<{ seg::BUFFER }>(op));
    for l in 0..64 {
        if exec >> l & 1 == 0 || ad.limit[l] < 4 {
            continue;
        }
        let mut b = [0u8; 4];
        lds::read_bytes(c, lds_base + 4 * l as u64, &mut b);
        write(c, ad.space, l, ad.a[l], &b)?;
    }
    Ok(())
}
