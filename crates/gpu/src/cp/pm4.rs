//! The PM4 packet processor of a compute queue (KFD_IOC_QUEUE_TYPE_COMPUTE),
//! as gfx9's MEC runs it: packet formats and fields from Linux's
//! `soc15d.h`, registers from the `gc_9_*` offset headers.
//!
//! The ring holds dwords. The write pointer is a 64-bit dword count that
//! only grows (gfx9 compute queues use 64-bit write pointers); the packet
//! at count `w` starts at ring dword `w % (ring_size / 4)` and may wrap
//! around the ring's end. The read pointer the CP writes back is 32 bits:
//! the ring dword offset up to which it has consumed packets. A packet is
//! consumed once it has run, an INDIRECT_BUFFER once its whole IB (and the
//! IBs it called) has.
//!
//! Every packet starts with a header: bits 30-31 the type; type 2 is a
//! one-dword filler; type 3 has the opcode in bits 8-15 and in bits 16-29
//! its body's length in dwords minus 1 (a NOP with the count 0x3fff is a
//! lone header). Types 0 and 1 (direct register
//! writes, which only the kernel driver's rings use) stop the queue, as do
//! opcodes not listed in [`name`].
//!
//! The emulated CP is XCC 0 of its partition and runs each dispatch whole:
//! a PRED_EXEC block runs only if its XCC mask selects XCC 0.

mod dispatch;

use super::pool::Pool;
use super::signal::{load_u32, load_u64, store_u32, store_u64};
use super::{Cx, Engine, GpuFault, Step, Stop};
use crate::mem::{Access, MemFault, Tlb};
use std::time::Instant;

const NOP: u32 = 0x10;
const SET_BASE: u32 = 0x11;
const DISPATCH_DIRECT: u32 = 0x15;
const DISPATCH_INDIRECT: u32 = 0x16;
const PRED_EXEC: u32 = 0x23;
const WRITE_DATA: u32 = 0x37;
const WAIT_REG_MEM: u32 = 0x3c;
const INDIRECT_BUFFER: u32 = 0x3f;
const COPY_DATA: u32 = 0x40;
const EVENT_WRITE: u32 = 0x46;
const RELEASE_MEM: u32 = 0x49;
const ACQUIRE_MEM: u32 = 0x58;
const SET_CONFIG_REG: u32 = 0x68;
const SET_CONTEXT_REG: u32 = 0x69;
const SET_SH_REG: u32 = 0x76;
const SET_UCONFIG_REG: u32 = 0x79;

/// The opcodes this CP runs, by name.
fn name(op: u32) -> Option<&'static str> {
    Some(match op {
        NOP => "NOP",
        SET_BASE => "SET_BASE",
        DISPATCH_DIRECT => "DISPATCH_DIRECT",
        DISPATCH_INDIRECT => "DISPATCH_INDIRECT",
        PRED_EXEC => "PRED_EXEC",
        WRITE_DATA => "WRITE_DATA",
        WAIT_REG_MEM => "WAIT_REG_MEM",
        INDIRECT_BUFFER => "INDIRECT_BUFFER",
        COPY_DATA => "COPY_DATA",
        EVENT_WRITE => "EVENT_WRITE",
        RELEASE_MEM => "RELEASE_MEM",
        ACQUIRE_MEM => "ACQUIRE_MEM",
        SET_CONFIG_REG => "SET_CONFIG_REG",
        SET_CONTEXT_REG => "SET_CONTEXT_REG",
        SET_SH_REG => "SET_SH_REG",
        SET_UCONFIG_REG => "SET_UCONFIG_REG",
        _ => return None,
    })
}

/// The register space a SET_*_REG packet writes: first and end (exclusive)
/// dword offsets (`PACKET3_SET_*_REG_START/END`; the uconfig space runs to
/// the end of the 16-bit offset range gfx9 decodes).
fn space(op: u32) -> (u32, u32) {
    match op {
        SET_CONFIG_REG => (0x2000, 0x2c00),
        SET_SH_REG => (0x2c00, 0x3000),
        SET_CONTEXT_REG => (0xa000, 0xa400),
        _ => (0xc000, 0x1_0000),
    }
}

/// IBs may nest this deep (the ring calls IB1, which may call IB2).
const MAX_IB_DEPTH: usize = 2;

/// SET_BASE's index of the DISPATCH_INDIRECT/DRAW_INDIRECT base.
const BASE_INDIRECT: u32 = 1;

/// An indirect buffer being executed.
#[derive(Copy, Clone, Debug)]
struct Ib {
    base: u64,
    /// Size and position of the next packet, in dwords.
    size: u32,
    pos: u32,
}

/// Where a packet is, for reports.
#[derive(Copy, Clone, Debug)]
enum At {
    /// Byte offset in the ring.
    Ring(u64),
    /// IB level (1 or 2), the IB, and the byte offset in it.
    Ib(usize, Ib, u64),
    /// The INDIRECT_BUFFER command of the AQL packet at this address
    /// (an AQL queue's `AMD_AQL_FORMAT_PM4_IB` packet).
    Aql(u64),
}

/// What the stream does after a packet.
enum Next {
    /// Goes on after it.
    Done,
    /// Goes on after it and the `n` dwords that follow (a PRED_EXEC block
    /// for another XCC).
    Skip(u32),
    /// Runs an IB, then goes on after the packet.
    Call(Ib),
    /// Goes on in an IB instead of the rest of the current one.
    Chain(Ib),
}

/// The PM4 engine of one queue.
#[derive(Default)]
pub struct Pm4 {
    tlb: Tlb,
    /// Ring dwords consumed since the queue started.
    rptr: u64,
    /// The IBs being executed, innermost last, and the length of the ring's
    /// INDIRECT_BUFFER packet that called the first.
    ibs: Vec<Ib>,
    ring_call: u64,
    /// The queue's registers (SET_*_REG, register writes of WRITE_DATA and
    /// COPY_DATA, what the dispatch packets program).
    regs: dispatch::Regs,
    /// SET_BASE's DISPATCH_INDIRECT base.
    indirect_base: u64,
    /// The packet being executed.
    pkt: Vec<u32>,
    raw: Vec<u8>,
    /// When the packet at the read position began to wait.
    waiting: Option<Instant>,
    /// Dispatches run so far (the dispatch id of the next).
    dispatches: u64,
    /// Threads for dispatches of several workgroups.
    pool: Option<Pool>,
}

fn addr(lo: u32, hi: u32) -> u64 {
    u64::from(lo) | u64::from(hi) << 32
}

impl Engine for Pm4 {
    fn quiescent(&self) -> bool {
        self.ibs.is_empty()
    }

    fn step(&mut self, cx: &Cx) -> Step {
        let d = cx.desc;
        if d.ring_size < 4 || d.ring_base == 0 {
            // Inactive (a queue without a ring or with a percentage of 0).
            return Step::Idle;
        }
        let ring_dw = d.ring_size / 4;
        // The packet's position and how many dwords are there to read.
        let (at, avail) = match self.ib_at() {
            Some(p) => p,
            None => {
                let src = if d.write_ptr != 0 {
                    d.write_ptr
                } else {
                    d.doorbell
                };
                let wptr = match load_u64(cx.vm(), &mut self.tlb, src) {
                    Ok(w) => w,
                    Err(f) => return cx.mem_fault("reading the queue's write pointer", &f),
                };
                if wptr <= self.rptr {
                    return Step::Idle;
                }
                (At::Ring(4 * (self.rptr % ring_dw)), wptr - self.rptr)
            }
        };
        let step = self.exec(cx, at, avail, ring_dw);
        if matches!(step, Step::Progress) && self.ibs.is_empty() {
            let r = (self.rptr % ring_dw) as u32;
            if let Err(f) = store_u32(cx.vm(), &mut self.tlb, d.read_ptr, r) {
                return cx.mem_fault("writing the queue's read pointer", &f);
            }
        }
        step
    }
}

impl Pm4 {
    /// The position of the next packet of the innermost IB being run, and
    /// the dwords left in that IB.
    fn ib_at(&self) -> Option<(At, u64)> {
        let &ib = self.ibs.last()?;
        let off = 4 * u64::from(ib.pos);
        Some((At::Ib(self.ibs.len(), ib, off), u64::from(ib.size - ib.pos)))
    }

    /// Runs the packet at `at` (with `avail` dwords readable there) and
    /// moves past it: into the IB it calls, or on in its IB or ring, out of
    /// IBs that end. `ring_dw` is the ring's size in dwords (a packet must
    /// fit it).
    fn exec(&mut self, cx: &Cx, at: At, avail: u64, ring_dw: u64) -> Step {
        if let Err(f) = self.load(cx, at, 1) {
            return self.mem(cx, at, &f);
        }
        let header = self.pkt[0];
        let len = match header >> 30 {
            2 => 1,
            // A NOP with the count 0x3fff is one dword (amdgpu pads rings
            // with it).
            3 if header & 0x3fff_ff00 == 0x3fff_0000 | NOP << 8 => 1,
            3 => u64::from((header >> 16) & 0x3fff) + 2,
            t => {
                return self.halt(
                    cx,
                    at,
                    &format!(
                        "a type-{t} packet (header 0x{header:08x}): only type-2 and type-3 packets run on a compute queue"
                    ),
                );
            }
        };
        let op = if len == 1 { NOP } else { (header >> 8) & 0xff };
        if len > avail {
            return match at {
                At::Ring(_) if len <= ring_dw => Step::Idle, // not written completely yet
                At::Ring(_) | At::Aql(_) => self.halt(
                    cx,
                    at,
                    &format!("a packet of {len} dwords does not fit the ring of {ring_dw}"),
                ),
                At::Ib(..) => self.halt(
                    cx,
                    at,
                    &format!("the packet's {len} dwords run past the end of its IB"),
                ),
            };
        }
        if let Err(f) = self.load(cx, at, len as usize) {
            return self.mem(cx, at, &f);
        }
        let next = match self.run(cx, at, op) {
            Ok(n) => n,
            Err(Stop::Blocked) => return Step::Blocked,
            Err(Stop::Halt) => return Step::Halt,
        };
        self.waiting = None;
        let skip = match next {
            Next::Skip(n) => u64::from(n),
            _ => 0,
        };
        if len + skip > avail {
            return match at {
                // The skipped dwords are not all written yet: the
                // PRED_EXEC runs again once they are.
                At::Ring(_) if len + skip <= ring_dw => Step::Idle,
                _ => self.halt(
                    cx,
                    at,
                    &format!("PRED_EXEC skips {skip} dwords, past the end of the packets"),
                ),
            };
        }
        match (at, next) {
            (At::Ring(_), Next::Call(ib) | Next::Chain(ib)) => {
                self.ring_call = len;
                self.ibs.push(ib);
            }
            (At::Ring(_), _) => self.rptr += len + skip,
            // `run_aql_ib` runs the AQL packet's command itself.
            (At::Aql(_), _) => {}
            (At::Ib(..), Next::Chain(ib)) => *self.ibs.last_mut().expect("in an IB") = ib,
            (At::Ib(..), next) => {
                let top = self.ibs.last_mut().expect("in an IB");
                top.pos += (len + skip) as u32;
                if let Next::Call(ib) = next {
                    self.ibs.push(ib);
                }
            }
        }
        // Return from finished IBs; the ring's INDIRECT_BUFFER is consumed
        // once the last has.
        while self.ibs.last().is_some_and(|ib| ib.pos >= ib.size) {
            self.ibs.pop();
            if self.ibs.is_empty() {
                self.rptr += self.ring_call;
            }
        }
        Step::Progress
    }

    /// An AQL queue's PM4 indirect-buffer packet (`AMD_AQL_FORMAT_PM4_IB`):
    /// `cmd` is the INDIRECT_BUFFER packet it carries (its IB is an IB1,
    /// which may call IB2s), read from the AQL packet at `slot`. Runs the IB
    /// to its end; a wait (`Stop::Blocked`) keeps the position, and the next
    /// call goes on from there.
    pub(super) fn run_aql_ib(&mut self, cx: &Cx, slot: u64, cmd: [u32; 4]) -> Result<(), Stop> {
        if self.ibs.is_empty() {
            let at = At::Aql(slot);
            self.pkt.clear();
            self.pkt.extend_from_slice(&cmd);
            let want = 3 << 30 | 2 << 16 | INDIRECT_BUFFER << 8;
            if cmd[0] & 0xffff_ff00 != want {
                return Err(self.bad(
                    cx,
                    at,
                    &format!(
                        "the packet carries header 0x{:08x}, not an INDIRECT_BUFFER (0x{want:08x})",
                        cmd[0]
                    ),
                ));
            }
            match self.run(cx, at, INDIRECT_BUFFER)? {
                Next::Call(ib) | Next::Chain(ib) if ib.size > 0 => self.ibs.push(ib),
                _ => return Ok(()),
            }
        }
        while let Some((at, avail)) = self.ib_at() {
            match self.exec(cx, at, avail, u64::MAX) {
                Step::Progress => {}
                Step::Blocked | Step::Idle => return Err(Stop::Blocked),
                Step::Halt => {
                    self.ibs.clear();
                    return Err(Stop::Halt);
                }
            }
        }
        Ok(())
    }

    /// Reads `n` dwords at `at` into `self.pkt`.
    fn load(&mut self, cx: &Cx, at: At, n: usize) -> Result<(), MemFault> {
        self.raw.resize(4 * n, 0);
        match at {
            At::Ring(off) => {
                let d = cx.desc;
                let ring = (d.ring_base, d.ring_size);
                super::ring_read(cx.vm(), &mut self.tlb, ring, off, &mut self.raw)?;
            }
            At::Ib(_, ib, off) => {
                cx.vm()
                    .read(&mut self.tlb, ib.base.wrapping_add(off), &mut self.raw)?;
            }
            // The command is in `self.pkt` already.
            At::Aql(_) => return Ok(()),
        }
        super::dwords(&self.raw, &mut self.pkt);
        Ok(())
    }

    /// The packet at `at`, for reports.
    fn where_(&self, at: At) -> String {
        let header = self.pkt.first().copied().unwrap_or(0);
        let what = match header >> 30 {
            2 => "type-2 filler".to_string(),
            3 => {
                let op = (header >> 8) & 0xff;
                match name(op) {
                    Some(n) => format!("{n} packet (opcode 0x{op:02x})"),
                    None => format!("packet of unknown opcode 0x{op:02x}"),
                }
            }
            t => format!("type-{t} packet"),
        };
        match at {
            At::Ring(off) => format!("{what} at ring offset 0x{off:x}"),
            At::Aql(slot) => format!("{what} of the AQL PM4-IB packet at 0x{slot:x}"),
            At::Ib(level, ib, off) => format!(
                "{what} at offset 0x{off:x} of IB{level} at 0x{:x} ({} dwords)",
                ib.base, ib.size
            ),
        }
    }

    fn packet_addr(&self, cx: &Cx, at: At) -> u64 {
        match at {
            At::Ring(off) => cx.desc.ring_base.wrapping_add(off),
            At::Aql(slot) => slot,
            At::Ib(_, ib, off) => ib.base.wrapping_add(off),
        }
    }

    /// Reports a malformed or unsupported packet and stops the queue.
    fn halt(&self, cx: &Cx, at: At, what: &str) -> Step {
        cx.fault(GpuFault {
            addr: self.packet_addr(cx, at),
            write: false,
            hang: false,
            report: format!(
                "{}\n  {}: {what}: the queue stops",
                cx.queue_name(),
                self.where_(at)
            ),
            ..GpuFault::default()
        })
    }

    fn bad(&self, cx: &Cx, at: At, what: &str) -> Stop {
        self.halt(cx, at, what);
        Stop::Halt
    }

    /// Reports a memory fault of the packet at `at`.
    fn mem(&self, cx: &Cx, at: At, f: &MemFault) -> Step {
        cx.fault(GpuFault {
            addr: f.addr,
            write: f.access != Access::Read,
            hang: false,
            report: format!("{}\n  {}: {f}", cx.queue_name(), self.where_(at)),
            ..GpuFault::default()
        })
    }

    fn mem_stop(&self, cx: &Cx, at: At, f: &MemFault) -> Stop {
        self.mem(cx, at, f);
        Stop::Halt
    }

    /// Runs the packet in `self.pkt`.
    fn run(&mut self, cx: &Cx, at: At, op: u32) -> Result<Next, Stop> {
        let p = self.pkt.clone();
        let need = |s: &Self, n: usize| -> Result<(), Stop> {
            if p.len() < n {
                Err(s.bad(
                    cx,
                    at,
                    &format!("it has {} dwords, fewer than the {n} it needs", p.len()),
                ))
            } else {
                Ok(())
            }
        };
        match op {
            // The emulated CP keeps no caches and runs dispatches to
            // completion, so cache actions and pipeline events are done.
            NOP | ACQUIRE_MEM | EVENT_WRITE => {}
            SET_CONFIG_REG | SET_CONTEXT_REG | SET_SH_REG | SET_UCONFIG_REG => {
                need(self, 3)?;
                let (start, end) = space(op);
                let first = start + (p[1] & 0xffff);
                let n = (p.len() - 2) as u32;
                if first.saturating_add(n) > end {
                    return Err(self.bad(
                        cx,
                        at,
                        &format!(
                            "{n} registers from offset 0x{:x} run past the register space 0x{start:x}-0x{end:x}",
                            p[1] & 0xffff
                        ),
                    ));
                }
                for (i, &v) in p[2..].iter().enumerate() {
                    self.regs.set(first + i as u32, v);
                }
            }
            SET_BASE => {
                need(self, 4)?;
                if p[1] & 0xf == BASE_INDIRECT {
                    self.indirect_base = addr(p[2], p[3]) & !7;
                }
            }
            PRED_EXEC => {
                need(self, 2)?;
                // Bits 24-31 select virtual XCCs; this CP is XCC 0.
                if p[1] & 1 << 24 == 0 {
                    return Ok(Next::Skip(p[1] & 0x3fff));
                }
            }
            INDIRECT_BUFFER => {
                need(self, 4)?;
                let ib = Ib {
                    base: addr(p[1] & !3, p[2] & 0xffff),
                    size: p[3] & 0xf_ffff,
                    pos: 0,
                };
                let chain = p[3] >> 20 & 1 == 1;
                let level = match at {
                    At::Ring(_) | At::Aql(_) => 0,
                    At::Ib(l, ..) => l,
                };
                if chain && level > 0 {
                    return Ok(Next::Chain(ib));
                }
                if level >= MAX_IB_DEPTH {
                    return Err(self.bad(
                        cx,
                        at,
                        &format!(
                            "an IB called from IB{level}: IBs nest at most {MAX_IB_DEPTH} deep"
                        ),
                    ));
                }
                return Ok(Next::Call(ib));
            }
            WRITE_DATA => {
                need(self, 4)?;
                self.write_data(cx, at, &p)?;
            }
            COPY_DATA => {
                need(self, 6)?;
                self.copy_data(cx, at, &p)?;
            }
            WAIT_REG_MEM => {
                need(self, 7)?;
                self.wait_reg_mem(cx, at, &p)?;
            }
            RELEASE_MEM => {
                need(self, 8)?;
                self.release_mem(cx, at, &p)?;
            }
            DISPATCH_DIRECT => {
                need(self, 5)?;
                self.dispatch(cx, at, [p[1], p[2], p[3]], p[4])?;
            }
            DISPATCH_INDIRECT => {
                // The MEC's form carries the address; the graphics form an
                // offset from SET_BASE.
                need(self, 3)?;
                let (a, initiator) = if p.len() >= 4 {
                    (addr(p[1], p[2]), p[3])
                } else {
                    (self.indirect_base.wrapping_add(u64::from(p[1])), p[2])
                };
                let mut dims = [0u8; 12];
                cx.vm()
                    .read(&mut self.tlb, a, &mut dims)
                    .map_err(|f| self.mem_stop(cx, at, &f))?;
                let dims = std::array::from_fn(|i| {
                    u32::from_le_bytes(dims[4 * i..4 * i + 4].try_into().expect("4 bytes"))
                });
                self.dispatch(cx, at, dims, initiator)?;
            }
            _ => {
                let h = p[0];
                return Err(self.bad(
                    cx,
                    at,
                    &format!("unknown PM4 opcode 0x{op:02x} (header 0x{h:08x})"),
                ));
            }
        }
        Ok(Next::Done)
    }

    /// WRITE_DATA: DW1 DST_SEL (bits 8-11: 0 register, 1/2/5 memory),
    /// WR_ONE_ADDR (bit 16), WR_CONFIRM (bit 20: every write here is
    /// confirmed before the next packet); DW2-3 the destination; the data
    /// follows.
    fn write_data(&mut self, cx: &Cx, at: At, p: &[u32]) -> Result<(), Stop> {
        let dst_sel = (p[1] >> 8) & 0xf;
        let one = p[1] >> 16 & 1 == 1;
        let data = &p[4..];
        match dst_sel {
            0 => {
                let reg = p[2] & 0x3_ffff;
                for (i, &v) in data.iter().enumerate() {
                    let r = if one { reg } else { reg + i as u32 };
                    self.regs.set(r, v);
                }
            }
            1 | 2 | 5 => {
                let dst = addr(p[2] & !3, p[3]);
                let vm = cx.vm();
                for (i, &v) in data.iter().enumerate() {
                    let a = if one {
                        dst
                    } else {
                        dst.wrapping_add(4 * i as u64)
                    };
                    store_u32(vm, &mut self.tlb, a, v).map_err(|f| self.mem_stop(cx, at, &f))?;
                }
            }
            s => return Err(self.bad(cx, at, &format!("DST_SEL {s} is not supported"))),
        }
        Ok(())
    }

    /// COPY_DATA: DW1 SRC_SEL (bits 0-3: 0 register, 1/2 memory, 4
    /// performance counter, 5 immediate, 9 GPU clock), DST_SEL (bits 8-11:
    /// 0 register, 1/2/5 memory, 4 performance counter), COUNT_SEL (bit
    /// 16: 64 bits); DW2-3 source, DW4-5 destination.
    fn copy_data(&mut self, cx: &Cx, at: At, p: &[u32]) -> Result<(), Stop> {
        let (src_sel, dst_sel) = (p[1] & 0xf, (p[1] >> 8) & 0xf);
        let wide = p[1] >> 16 & 1 == 1;
        let vm = cx.vm();
        let v = match src_sel {
            0 | 4 => {
                let r = p[2] & 0x3_ffff;
                Ok(u64::from(self.regs.get(r)) | u64::from(self.regs.get(r + 1)) << 32)
            }
            1 | 2 if wide => load_u64(vm, &mut self.tlb, addr(p[2] & !7, p[3])),
            1 | 2 => load_u32(vm, &mut self.tlb, addr(p[2] & !3, p[3])).map(u64::from),
            5 => Ok(addr(p[2], p[3])),
            9 => Ok(cx.host().gpu_clock()),
            s => return Err(self.bad(cx, at, &format!("SRC_SEL {s} is not supported"))),
        }
        .map_err(|f| self.mem_stop(cx, at, &f))?;
        match dst_sel {
            0 | 4 => {
                let r = p[4] & 0x3_ffff;
                self.regs.set(r, v as u32);
                if wide {
                    self.regs.set(r + 1, (v >> 32) as u32);
                }
                Ok(())
            }
            1 | 2 | 5 if wide => store_u64(vm, &mut self.tlb, addr(p[4] & !7, p[5]), v),
            1 | 2 | 5 => store_u32(vm, &mut self.tlb, addr(p[4] & !3, p[5]), v as u32),
            s => return Err(self.bad(cx, at, &format!("DST_SEL {s} is not supported"))),
        }
        .map_err(|f| self.mem_stop(cx, at, &f))
    }

    /// WAIT_REG_MEM: DW1 FUNCTION (bits 0-2), MEM_SPACE (bits 4-5: 0
    /// register, 1 memory), OPERATION (bits 6-7: 1 writes a register and
    /// waits on another, the HDP flush); DW2-3 the address (or register),
    /// DW4 reference, DW5 mask, DW6 poll interval. A memory wait polls
    /// until `(value & mask) FUNCTION reference` holds, or the watchdog
    /// stops it. A register wait compares the queue's register file (no
    /// hardware status register changes here); the HDP flush, which has
    /// nothing to flush, completes at once.
    fn wait_reg_mem(&mut self, cx: &Cx, at: At, p: &[u32]) -> Result<(), Stop> {
        let func = p[1] & 7;
        let (mem_space, operation) = ((p[1] >> 4) & 3, (p[1] >> 6) & 3);
        let (reference, mask) = (p[4], p[5]);
        let v = match (mem_space, operation) {
            (0, 1) => return Ok(()),
            (0, _) => self.regs.get(p[2] & 0x3_ffff),
            (1, _) => load_u32(cx.vm(), &mut self.tlb, addr(p[2] & !3, p[3]))
                .map_err(|f| self.mem_stop(cx, at, &f))?,
            (s, _) => return Err(self.bad(cx, at, &format!("MEM_SPACE {s} is not supported"))),
        };
        let Some(held) = super::compare(func, v & mask, reference) else {
            return Err(self.bad(cx, at, "the reserved compare function 7"));
        };
        if held {
            return Ok(());
        }
        let what = format!(
            "{} (waiting for (0x{:x} & 0x{mask:x}) to compare {func} with 0x{reference:x})",
            self.where_(at),
            v
        );
        Err(cx.wait(&mut self.waiting, &|| what.clone()))
    }

    /// RELEASE_MEM (gfx9): DW1 the event and cache actions (all done here),
    /// DW2 DST_SEL (bits 16-17), INT_SEL (bits 24-26), DATA_SEL (bits
    /// 29-31); DW3-4 the address, DW5-6 the data, DW7 the interrupt's
    /// context id. The data is written first, then the interrupt raised.
    fn release_mem(&mut self, cx: &Cx, at: At, p: &[u32]) -> Result<(), Stop> {
        let (int_sel, data_sel) = ((p[2] >> 24) & 7, p[2] >> 29);
        let a = addr(p[3], p[4]);
        let data = addr(p[5], p[6]);
        let vm = cx.vm();
        let r = match data_sel {
            0 => Ok(()),
            1 => store_u32(vm, &mut self.tlb, a & !3, data as u32),
            2 => store_u64(vm, &mut self.tlb, a & !7, data),
            // The GPU clock counter; the system counter is the same clock
            // here.
            3 | 4 => store_u64(vm, &mut self.tlb, a & !7, cx.host().gpu_clock()),
            s => return Err(self.bad(cx, at, &format!("DATA_SEL {s} is not supported"))),
        };
        r.map_err(|f| self.mem_stop(cx, at, &f))?;
        match int_sel {
            // None; send data after write confirm (no interrupt).
            0 | 3 => {}
            // Interrupt only; interrupt after the write is confirmed;
            // unconditionally send the context id.
            1 | 2 | 4 => cx.host().eop_interrupt(p[7]),
            s => return Err(self.bad(cx, at, &format!("INT_SEL {s} is not supported"))),
        }
        Ok(())
    }
}
