//! The SDMA engine (SDMA v4, as on gfx9): the packets ROCr's `BlitSdma`
//! writes for copies, fills and signal updates (ROCr `sdma_registers.h`,
//! `amd_blit_sdma.cpp`; Linux `vega10_sdma_pkt_open.h`), and the cache
//! request SDMA v5/v6 (gfx10/gfx11) add, GCR_REQ (Linux
//! `sdma_v6_0_0_pkt_open.h`), which ROCr writes around copies on gfx11.
//! The emulated GPU has no caches, so GCR_REQ has nothing to write back
//! or invalidate.
//!
//! The ring's read and write pointers are 64-bit byte offsets that only
//! grow; a packet at offset `p` starts at `ring_base + p % ring_size` and
//! may wrap around the ring's end. Every packet starts with a header dword:
//! opcode in bits 0-7, sub-opcode in bits 8-15, packet-specific fields in
//! bits 16-31.

use super::signal::{load_u32, load_u64, store_u32, store_u64};
use super::{Cx, Engine, GpuFault, Step, Stop};
use crate::mem::{Access, MemFault, Tlb};
use std::sync::atomic::Ordering;
use std::time::Instant;

const OP_NOP: u32 = 0;
const OP_COPY: u32 = 1;
const OP_WRITE: u32 = 2;
const OP_INDIRECT: u32 = 4;
const OP_FENCE: u32 = 5;
const OP_TRAP: u32 = 6;
const OP_SEMAPHORE: u32 = 7;
const OP_POLL_REGMEM: u32 = 8;
const OP_COND_EXE: u32 = 9;
const OP_ATOMIC: u32 = 10;
const OP_CONST_FILL: u32 = 11;
const OP_TIMESTAMP: u32 = 13;
const OP_GCR: u32 = 17;

const SUB_COPY_LINEAR: u32 = 0;
const SUB_COPY_LINEAR_RECT: u32 = 4;
const SUB_TIMESTAMP_SET: u32 = 0;
const SUB_TIMESTAMP_GET: u32 = 1;
const SUB_TIMESTAMP_GET_GLOBAL: u32 = 2;
/// GCR_REQ's `SDMA_SUBOP_USER_GCR`.
const SUB_USER_GCR: u32 = 1;

/// A POLL_REGMEM retry count meaning "forever".
const RETRY_FOREVER: u32 = 0xfff;

/// Bytes moved per step of a copy or fill.
const CHUNK: usize = 1 << 20;

/// The SDMA engine of one queue.
#[derive(Default)]
pub struct Sdma {
    tlb: Tlb,
    /// The read pointer (bytes); loaded from memory at the start.
    rptr: Option<u64>,
    /// The packet being executed.
    pkt: Vec<u32>,
    /// Bounce buffer of copies and fills.
    buf: Vec<u8>,
    raw: Vec<u8>,
    /// When the packet at the read pointer began to wait, and how many
    /// times it checked its condition.
    waiting: Option<Instant>,
    tries: u32,
    /// The engine-local timestamp is the GPU clock plus this.
    ts_offset: u64,
    /// The indirect buffer the ring's INDIRECT packet at the read pointer
    /// runs: its packets execute in place of the ring's until its end.
    ib: Option<Ib>,
    /// Dwords after the packet just executed that a false COND_EXE skips.
    skip: u64,
}

/// An indirect buffer being executed.
#[derive(Copy, Clone, Debug)]
struct Ib {
    base: u64,
    /// Its length and the offset of the next packet, in dwords.
    dwords: u64,
    pos: u64,
}

fn name(op: u32) -> &'static str {
    match op {
        OP_NOP => "NOP",
        OP_COPY => "COPY",
        OP_WRITE => "WRITE",
        OP_INDIRECT => "INDIRECT_BUFFER",
        OP_FENCE => "FENCE",
        OP_TRAP => "TRAP",
        OP_SEMAPHORE => "SEMAPHORE",
        OP_POLL_REGMEM => "POLL_REGMEM",
        OP_COND_EXE => "COND_EXE",
        OP_ATOMIC => "ATOMIC",
        OP_CONST_FILL => "CONST_FILL",
        OP_TIMESTAMP => "TIMESTAMP",
        OP_GCR => "GCR_REQ",
        _ => "unknown",
    }
}

fn addr(lo: u32, hi: u32) -> u64 {
    u64::from(lo) | u64::from(hi) << 32
}

impl Engine for Sdma {
    fn quiescent(&self) -> bool {
        self.ib.is_none() && self.skip == 0
    }

    fn step(&mut self, cx: &Cx) -> Step {
        let d = cx.desc;
        if d.ring_size == 0 || d.ring_base == 0 {
            // Inactive (KFD: a queue without a ring or with a percentage
            // of 0).
            return Step::Idle;
        }
        let vm = cx.vm();
        let rptr = match self.rptr {
            Some(r) => r,
            None => match load_u64(vm, &mut self.tlb, d.read_ptr) {
                Ok(r) => *self.rptr.insert(r),
                Err(f) => return cx.mem_fault("reading the queue's read pointer", &f),
            },
        };
        let src = if d.write_ptr != 0 {
            d.write_ptr
        } else {
            d.doorbell
        };
        let wptr = match load_u64(vm, &mut self.tlb, src) {
            Ok(w) => w,
            Err(f) => return cx.mem_fault("reading the queue's write pointer", &f),
        };
        let avail = wptr.wrapping_sub(rptr);
        if wptr <= rptr || avail < 4 {
            return Step::Idle;
        }
        if let Some(ib) = self.ib {
            return self.step_ib(cx, rptr, ib);
        }
        let ring_dw = |s: &mut Sdma, i: u64| -> Result<u32, MemFault> {
            let off = (rptr + 4 * i) % d.ring_size;
            load_u32(vm, &mut s.tlb, d.ring_base.wrapping_add(off))
        };
        let header = match ring_dw(self, 0) {
            Ok(h) => h,
            Err(f) => return cx.mem_fault("reading the ring", &f),
        };
        let len = match packet_len(header, avail / 4, |i| ring_dw(self, i)) {
            Ok(Some(l)) => l,
            Ok(None) => return Step::Idle,
            Err(Err(f)) => return cx.mem_fault("reading the ring", &f),
            Err(Ok(what)) => return self.bad(cx, rptr, &what),
        };
        if 4 * len > d.ring_size {
            return self.bad(
                cx,
                rptr,
                &format!(
                    "a {} packet of {len} dwords does not fit the ring",
                    name(header & 0xff)
                ),
            );
        }
        if 4 * len > avail {
            // Not written completely yet.
            return Step::Idle;
        }
        if let Err(f) = self.load(cx, rptr, len as usize) {
            return cx.mem_fault("reading the ring", &f);
        }
        if header & 0xff == OP_INDIRECT {
            let p = &self.pkt;
            let ib = Ib {
                base: addr(p[1], p[2]),
                dwords: u64::from(p[3] & 0xf_ffff),
                pos: 0,
            };
            self.ib = Some(ib);
            return self.step_ib(cx, rptr, ib);
        }
        match self.execute(cx, rptr) {
            Ok(()) => {}
            Err(Stop::Blocked) => return Step::Blocked,
            Err(Stop::Halt) => return Step::Halt,
        }
        // A false COND_EXE skips ring dwords that must be there first.
        let skip = std::mem::take(&mut self.skip);
        if 4 * (len + skip) > avail {
            self.skip = skip;
            return Step::Idle;
        }
        self.advance(cx, rptr, len + skip)
    }
}

/// The length in dwords of the packet with `header` (`dw(i)` reads its
/// dword `i`, of which `avail` are written): `None` until enough of it is
/// there to tell; an unknown packet is an error naming it.
fn packet_len(
    header: u32,
    avail: u64,
    mut dw: impl FnMut(u64) -> Result<u32, MemFault>,
) -> Result<Option<u64>, Result<String, MemFault>> {
    let (op, sub) = (header & 0xff, (header >> 8) & 0xff);
    Ok(Some(match (op, sub) {
        (OP_NOP, _) => 1 + u64::from((header >> 16) & 0x3fff),
        (OP_COPY, SUB_COPY_LINEAR) => 7,
        (OP_COPY, SUB_COPY_LINEAR_RECT) => 13,
        (OP_WRITE, 0) => {
            if avail < 4 {
                return Ok(None);
            }
            5 + u64::from(dw(3).map_err(Err)? & 0xf_ffff)
        }
        (OP_INDIRECT, _) => 6,
        (OP_FENCE, _) => 4,
        (OP_TRAP, _) => 2,
        (OP_SEMAPHORE, _) => 3,
        (OP_POLL_REGMEM, _) => 6,
        (OP_COND_EXE, _) => 5,
        (OP_ATOMIC, _) => 8,
        (OP_CONST_FILL, _) => 5,
        (OP_TIMESTAMP, _) => 3,
        // Header, the address range (base and limit, 128-byte granules)
        // with GCR_CONTROL, and the VMID.
        (OP_GCR, SUB_USER_GCR) => 5,
        _ => {
            return Err(Ok(format!(
                "unknown SDMA packet: opcode {op}, sub-opcode {sub} (header 0x{header:08x})"
            )));
        }
    }))
}

impl Sdma {
    /// Executes the packet in `self.pkt`.
    fn execute(&mut self, cx: &Cx, rptr: u64) -> Result<(), Stop> {
        let vm = cx.vm();
        let header = self.pkt[0];
        let (op, sub) = (header & 0xff, (header >> 8) & 0xff);
        match op {
            OP_NOP | OP_GCR => Ok(()),
            OP_COPY => self.copy(cx, rptr, sub),
            OP_WRITE => self.write(cx, rptr),
            OP_FENCE => {
                let p = &self.pkt;
                let (a, v) = (addr(p[1], p[2]), p[3]);
                store_u32(vm, &mut self.tlb, a, v).map_err(|f| self.fault(cx, rptr, &f))
            }
            OP_TRAP => {
                // KFD signals the event whose id is the trap's interrupt
                // context (the low 28 bits).
                cx.host().signal_event(self.pkt[1] & 0x0fff_ffff);
                Ok(())
            }
            OP_SEMAPHORE => self.semaphore(cx, rptr),
            OP_POLL_REGMEM => self.poll(cx, rptr),
            OP_COND_EXE => self.cond_exe(cx, rptr),
            OP_ATOMIC => self.atomic(cx, rptr),
            OP_CONST_FILL => self.fill(cx, rptr),
            OP_INDIRECT => {
                self.bad(cx, rptr, "an INDIRECT_BUFFER inside an indirect buffer");
                Err(Stop::Halt)
            }
            _ => self.timestamp(cx, rptr, sub),
        }
    }

    /// The packet at the read pointer is done: `len` dwords are consumed.
    fn advance(&mut self, cx: &Cx, rptr: u64, len: u64) -> Step {
        self.waiting = None;
        self.tries = 0;
        let next = rptr + 4 * len;
        self.rptr = Some(next);
        if let Err(f) = store_u64(cx.vm(), &mut self.tlb, cx.desc.read_ptr, next) {
            return cx.mem_fault("writing the queue's read pointer", &f);
        }
        Step::Progress
    }

    /// One packet of the indirect buffer the ring's INDIRECT_BUFFER packet
    /// at `rptr` runs; once the buffer's end is reached, that packet is
    /// consumed. A packet running past the buffer's end stops the queue.
    fn step_ib(&mut self, cx: &Cx, rptr: u64, mut ib: Ib) -> Step {
        if ib.pos >= ib.dwords {
            self.ib = None;
            return self.advance(cx, rptr, 6);
        }
        let vm = cx.vm();
        let at = |pos: u64| ib.base.wrapping_add(4 * pos);
        let header = match load_u32(vm, &mut self.tlb, at(ib.pos)) {
            Ok(h) => h,
            Err(f) => return cx.mem_fault("reading an indirect buffer", &f),
        };
        let left = ib.dwords - ib.pos;
        let len = match packet_len(header, left, |i| {
            load_u32(vm, &mut self.tlb, at(ib.pos + i))
        }) {
            Ok(Some(l)) if l <= left => l,
            Ok(_) => {
                return self.bad(
                    cx,
                    rptr,
                    &format!(
                        "a {} packet at dword {} of the indirect buffer at 0x{:x} runs past its {} dwords",
                        name(header & 0xff),
                        ib.pos,
                        ib.base,
                        ib.dwords
                    ),
                );
            }
            Err(Err(f)) => return cx.mem_fault("reading an indirect buffer", &f),
            Err(Ok(what)) => {
                let what = format!(
                    "{what}, at dword {} of the indirect buffer at 0x{:x}",
                    ib.pos, ib.base
                );
                return self.bad(cx, rptr, &what);
            }
        };
        self.raw.resize(4 * len as usize, 0);
        if let Err(f) = vm.read(&mut self.tlb, at(ib.pos), &mut self.raw) {
            return cx.mem_fault("reading an indirect buffer", &f);
        }
        super::dwords(&self.raw, &mut self.pkt);
        match self.execute(cx, rptr) {
            Ok(()) => {}
            Err(Stop::Blocked) => return Step::Blocked,
            Err(Stop::Halt) => return Step::Halt,
        }
        self.waiting = None;
        self.tries = 0;
        // A false COND_EXE skips at most to the buffer's end.
        ib.pos = (ib.pos + len + std::mem::take(&mut self.skip)).min(ib.dwords);
        self.ib = Some(ib);
        Step::Progress
    }

    /// Reads the packet's `len` dwords at `rptr` (wrapping at the ring's
    /// end) into `self.pkt`.
    fn load(&mut self, cx: &Cx, rptr: u64, len: usize) -> Result<(), MemFault> {
        let d = cx.desc;
        self.raw.resize(4 * len, 0);
        super::ring_read(
            cx.vm(),
            &mut self.tlb,
            (d.ring_base, d.ring_size),
            rptr % d.ring_size,
            &mut self.raw,
        )?;
        super::dwords(&self.raw, &mut self.pkt);
        Ok(())
    }

    /// The packet at `rptr`, for reports.
    fn where_(&self, cx: &Cx, rptr: u64) -> String {
        format!(
            "packet {} at ring offset 0x{:x} (read pointer {rptr})",
            name(self.pkt.first().map_or(0xff, |h| h & 0xff)),
            rptr % cx.desc.ring_size.max(1),
        )
    }

    /// Reports a malformed packet.
    fn bad(&self, cx: &Cx, rptr: u64, what: &str) -> Step {
        cx.fault(GpuFault {
            addr: cx.desc.ring_base.wrapping_add(rptr % cx.desc.ring_size),
            write: false,
            hang: false,
            report: format!(
                "{}\n  at ring offset 0x{:x} (read pointer {rptr}): {what}: the queue stops",
                cx.queue_name(),
                rptr % cx.desc.ring_size
            ),
            ..GpuFault::default()
        })
    }

    /// Reports a memory fault of the packet at `rptr`.
    fn fault(&self, cx: &Cx, rptr: u64, f: &MemFault) -> Stop {
        cx.fault(GpuFault {
            addr: f.addr,
            write: f.access != Access::Read,
            hang: false,
            report: format!("{}\n  {}: {f}", cx.queue_name(), self.where_(cx, rptr)),
            ..GpuFault::default()
        });
        Stop::Halt
    }

    /// Keeps the packet waiting, or reports a hang past the watchdog.
    fn wait(&mut self, cx: &Cx, rptr: u64) -> Stop {
        let what = self.where_(cx, rptr);
        cx.wait(&mut self.waiting, &|| what.clone())
    }

    fn ensure_buf(&mut self) {
        if self.buf.len() < CHUNK {
            self.buf.resize(CHUNK, 0);
        }
    }

    /// Copies `n` bytes from `src` to `dst` through the bounce buffer, back
    /// to front when the destination overlaps the source's tail. Stops
    /// between chunks when the queue is being destroyed.
    fn move_bytes(&mut self, cx: &Cx, rptr: u64, src: u64, dst: u64, n: u64) -> Result<(), Stop> {
        self.ensure_buf();
        let vm = cx.vm();
        let backwards = dst > src && dst < src.saturating_add(n);
        let chunks = n.div_ceil(CHUNK as u64);
        for i in 0..chunks {
            if cx.ctl.stop.load(Ordering::Relaxed) {
                return Err(Stop::Halt);
            }
            let c = if backwards { chunks - 1 - i } else { i };
            let off = c * CHUNK as u64;
            let k = (n - off).min(CHUNK as u64) as usize;
            vm.read(&mut self.tlb, src.wrapping_add(off), &mut self.buf[..k])
                .map_err(|f| self.fault(cx, rptr, &f))?;
            vm.write(&mut self.tlb, dst.wrapping_add(off), &self.buf[..k])
                .map_err(|f| self.fault(cx, rptr, &f))?;
        }
        Ok(())
    }

    /// COPY LINEAR: DW1 count (bytes - 1), DW3-4 source, DW5-6 destination.
    /// COPY LINEAR RECT: a 3-D sub-window of `2^element`-byte elements.
    fn copy(&mut self, cx: &Cx, rptr: u64, sub: u32) -> Result<(), Stop> {
        let p = self.pkt.clone();
        if sub == SUB_COPY_LINEAR {
            let n = u64::from(p[1] & 0x3fff_ffff) + 1;
            let (src, dst) = (addr(p[3], p[4]), addr(p[5], p[6]));
            return self.move_bytes(cx, rptr, src, dst, n);
        }
        let e = (p[0] >> 29) & 7;
        if e > 4 {
            self.bad(
                cx,
                rptr,
                &format!("COPY LINEAR RECT with element size 2^{e}"),
            );
            return Err(Stop::Halt);
        }
        let field = |w: u32, lo: u32, bits: u32| u64::from((w >> lo) & ((1u32 << bits) - 1));
        let side = |a: usize| {
            (
                addr(p[a], p[a + 1]),
                [
                    field(p[a + 2], 0, 14),
                    field(p[a + 2], 16, 14),
                    field(p[a + 3], 0, 11),
                ],
                field(p[a + 3], 13, 19) + 1,
                field(p[a + 4], 0, 28) + 1,
            )
        };
        let (sbase, so, spitch, sslice) = side(1);
        let (dbase, dof, dpitch, dslice) = side(6);
        let rect = [
            field(p[11], 0, 14) + 1,
            field(p[11], 16, 14) + 1,
            field(p[12], 0, 11) + 1,
        ];
        let at = |base: u64, o: [u64; 3], pitch: u64, slice: u64, y: u64, z: u64| {
            base.wrapping_add((o[0] + (o[1] + y) * pitch + (o[2] + z) * slice) << e)
        };
        let row = rect[0] << e;
        for z in 0..rect[2] {
            for y in 0..rect[1] {
                let s = at(sbase, so, spitch, sslice, y, z);
                let t = at(dbase, dof, dpitch, dslice, y, z);
                self.move_bytes(cx, rptr, s, t, row)?;
            }
        }
        Ok(())
    }

    /// WRITE LINEAR (untiled): DW1-2 destination, DW3 count (dwords - 1),
    /// then the data.
    fn write(&mut self, cx: &Cx, rptr: u64) -> Result<(), Stop> {
        let dst = addr(self.pkt[1], self.pkt[2]);
        let data: Vec<u8> = self.pkt[4..].iter().flat_map(|w| w.to_le_bytes()).collect();
        let vm = cx.vm();
        for (i, c) in data.chunks(CHUNK).enumerate() {
            vm.write(&mut self.tlb, dst.wrapping_add((i * CHUNK) as u64), c)
                .map_err(|f| self.fault(cx, rptr, &f))?;
        }
        Ok(())
    }

    /// CONST_FILL: DW0 bits 30-31 element size (log2 bytes), DW1-2
    /// destination, DW3 data, DW4 count (bytes - 1; the low bits below the
    /// element size are ignored).
    fn fill(&mut self, cx: &Cx, rptr: u64) -> Result<(), Stop> {
        let p = &self.pkt;
        let size_log = p[0] >> 30;
        if size_log > 2 {
            self.bad(cx, rptr, "CONST_FILL with 8-byte elements");
            return Err(Stop::Halt);
        }
        let es = 1usize << size_log;
        let n = ((u64::from(p[4] & 0x3f_ffff) >> size_log) + 1) * es as u64;
        let (dst, data) = (addr(p[1], p[2]), p[3].to_le_bytes());
        self.ensure_buf();
        let k = (n as usize).min(CHUNK);
        for (i, b) in self.buf[..k].iter_mut().enumerate() {
            *b = data[i % es];
        }
        let vm = cx.vm();
        let mut off = 0;
        while off < n {
            if cx.ctl.stop.load(Ordering::Relaxed) {
                return Err(Stop::Halt);
            }
            let k = (n - off).min(CHUNK as u64) as usize;
            vm.write(&mut self.tlb, dst.wrapping_add(off), &self.buf[..k])
                .map_err(|f| self.fault(cx, rptr, &f))?;
            off += k as u64;
        }
        Ok(())
    }

    /// POLL_REGMEM: DW0 bit 31 memory (else register) poll, bits 28-30
    /// function; DW1-2 address, DW3 reference, DW4 mask, DW5 interval (bits
    /// 0-15) and retry count (bits 16-27, 0xfff = forever). Register polls
    /// (the HDP flush ROCr emits) complete at once: there is no register
    /// state to wait for.
    fn poll(&mut self, cx: &Cx, rptr: u64) -> Result<(), Stop> {
        let p = &self.pkt;
        if p[0] >> 31 == 0 {
            return Ok(());
        }
        let func = (p[0] >> 28) & 7;
        let (a, reference, mask, retries) = (addr(p[1], p[2]), p[3], p[4], (p[5] >> 16) & 0xfff);
        let v = load_u32(cx.vm(), &mut self.tlb, a).map_err(|f| self.fault(cx, rptr, &f))? & mask;
        let Some(held) = super::compare(func, v, reference) else {
            self.bad(cx, rptr, "POLL_REGMEM with the reserved function 7");
            return Err(Stop::Halt);
        };
        self.tries += 1;
        if held || (retries != RETRY_FOREVER && self.tries > retries) {
            return Ok(());
        }
        Err(self.wait(cx, rptr))
    }

    /// SEMAPHORE: DW0 bit 29 write one, bit 30 signal, bit 31 mailbox;
    /// DW1-2 the address of a 64-bit semaphore (8-byte aligned, as
    /// radeon's `cik_sdma_semaphore_ring_emit` places it). A signal adds
    /// one to it (writes 1 with write one); a wait holds the queue until
    /// it is nonzero and takes one off. The mailbox bit wakes a waiting
    /// engine at once on hardware; waiting engines here check again on
    /// their own.
    fn semaphore(&mut self, cx: &Cx, rptr: u64) -> Result<(), Stop> {
        let p = &self.pkt;
        let (write_one, signal) = (p[0] >> 29 & 1 == 1, p[0] >> 30 & 1 == 1);
        let a = addr(p[1], p[2]);
        let vm = cx.vm();
        let old = if signal {
            vm.atomic_u64(&mut self.tlb, a, |v| {
                Some(if write_one { 1 } else { v.wrapping_add(1) })
            })
        } else {
            vm.atomic_u64(&mut self.tlb, a, |v| v.checked_sub(1))
        }
        .map_err(|f| self.fault(cx, rptr, &f))?;
        if !signal && old == 0 {
            return Err(self.wait(cx, rptr));
        }
        Ok(())
    }

    /// COND_EXE: DW1-2 the address of a dword, DW3 the reference, DW4 bits
    /// 0-13 a count of dwords: the packets in those dwords after this one
    /// run only when the dword equals the reference (amdgpu's
    /// `sdma_v4_0_ring_init_cond_exec` skips a ring's work this way after
    /// a reset).
    fn cond_exe(&mut self, cx: &Cx, rptr: u64) -> Result<(), Stop> {
        let p = &self.pkt;
        let (a, reference, count) = (addr(p[1], p[2]), p[3], u64::from(p[4] & 0x3fff));
        let v = load_u32(cx.vm(), &mut self.tlb, a).map_err(|f| self.fault(cx, rptr, &f))?;
        self.skip = if v == reference { 0 } else { count };
        Ok(())
    }

    /// ATOMIC: DW0 bit 16 loop (retry a compare-swap until it succeeds),
    /// bits 25-31 the TC atomic operation; DW1-2 address, DW3-4 source
    /// data, DW5-6 compare data.
    fn atomic(&mut self, cx: &Cx, rptr: u64) -> Result<(), Stop> {
        let p = &self.pkt;
        let op = p[0] >> 25;
        let looped = p[0] >> 16 & 1 == 1;
        let (a, src, cmp) = (addr(p[1], p[2]), addr(p[3], p[4]), addr(p[5], p[6]));
        // TC_OP numbering: bit 5 selects 64 bits, bit 6 "no return"; the
        // low five bits are the operation.
        let wide = op & 0x20 != 0;
        let kind = op & 0x1f;
        if !(7..=0x19).contains(&kind) || (9..=0xe).contains(&kind) {
            self.bad(
                cx,
                rptr,
                &format!("ATOMIC with unsupported operation 0x{op:x}"),
            );
            return Err(Stop::Halt);
        }
        let bits = if wide { 64 } else { 32 };
        let mask = if wide { u64::MAX } else { u64::from(u32::MAX) };
        let sext = |x: u64| ((x << (64 - bits)) as i64) >> (64 - bits);
        let (src, cmp) = (src & mask, cmp & mask);
        let f = |old: u64| -> Option<u64> {
            let old = old & mask;
            let new = match kind {
                7 => src,
                8 => {
                    if old == cmp {
                        src
                    } else {
                        return None;
                    }
                }
                0xf => old.wrapping_add(src),
                0x10 => old.wrapping_sub(src),
                0x11 => sext(old).min(sext(src)) as u64,
                0x12 => old.min(src),
                0x13 => sext(old).max(sext(src)) as u64,
                0x14 => old.max(src),
                0x15 => old & src,
                0x16 => old | src,
                0x17 => old ^ src,
                0x18 => {
                    if old >= src {
                        0
                    } else {
                        old + 1
                    }
                }
                _ => {
                    if old == 0 || old > src {
                        src
                    } else {
                        old - 1
                    }
                }
            };
            Some(new & mask)
        };
        let vm = cx.vm();
        let old = if wide {
            vm.atomic_u64(&mut self.tlb, a, f)
        } else {
            vm.atomic_u32(&mut self.tlb, a, |x| f(u64::from(x)).map(|v| v as u32))
                .map(u64::from)
        }
        .map_err(|fl| self.fault(cx, rptr, &fl))?;
        if looped && kind == 8 && old & mask != cmp {
            return Err(self.wait(cx, rptr));
        }
        Ok(())
    }

    /// TIMESTAMP: SET loads the engine's local counter from DW1-2; GET
    /// writes it, GET_GLOBAL writes the GPU clock, as 64 bits at DW1-2.
    fn timestamp(&mut self, cx: &Cx, rptr: u64, sub: u32) -> Result<(), Stop> {
        let (a, clock) = (addr(self.pkt[1], self.pkt[2]), cx.host().gpu_clock());
        let v = match sub {
            SUB_TIMESTAMP_SET => {
                self.ts_offset = a.wrapping_sub(clock);
                return Ok(());
            }
            SUB_TIMESTAMP_GET => clock.wrapping_add(self.ts_offset),
            SUB_TIMESTAMP_GET_GLOBAL => clock,
            s => {
                self.bad(cx, rptr, &format!("TIMESTAMP with unknown sub-opcode {s}"));
                return Err(Stop::Halt);
            }
        };
        cx.vm()
            .write(&mut self.tlb, a, &v.to_le_bytes())
            .map_err(|f| self.fault(cx, rptr, &f))
    }
}
