//! The wait counters: which counters a memory instruction increments, how
//! their operations complete relative to each other, what a wait
//! instruction waits for, and [`Pending`], the operations a wave may still
//! have in flight.
//!
//! The hardware runs memory instructions asynchronously: a load's
//! destination is written some time after it issues, and software learns
//! that it has been only from the counters (ISA manuals, "Data dependency
//! resolution" and `S_WAITCNT`). On GFX9 (CDNA):
//!
//! * `vmcnt` counts vector memory instructions (loads, stores, atomics of
//!   the FLAT, GLOBAL, SCRATCH, MUBUF, MTBUF encodings). They complete in
//!   the order they were issued.
//! * `lgkmcnt` counts LDS and GDS instructions, scalar memory instructions
//!   and messages. LDS instructions complete in order among themselves;
//!   scalar memory instructions may complete in any order, so only
//!   `lgkmcnt(0)` proves one complete.
//! * A FLAT instruction (the generic segment) increments both; when one of
//!   its lanes addresses LDS its `lgkmcnt` part is unordered against the
//!   other LDS instructions. Whether it does is known only when it runs:
//!   [`Pending::issue`] takes the answer.
//! * `expcnt` counts exports and GDS instructions' data reads; CDNA has no
//!   exports.
//!
//! `s_waitcnt vmcnt(N)` waits until at most N counted operations are
//! outstanding. An operation is then proven complete when it is in-order
//! and at least N operations of its own ordered stream were issued after
//! it (whatever is left outstanding, the N youngest of its stream include
//! everything younger than it), or when N is 0.
//!
//! The model names the later families' counters (GFX10's `vscnt`, which
//! takes stores out of `vmcnt`; GFX12's split `loadcnt`, `storecnt`,
//! `samplecnt`, `bvhcnt`, `dscnt`, `kmcnt`) so that their targets add a
//! [`Model`] rather than a new kind of tracker.

use rocjitsu_isa::gfx9::Body;
use rocjitsu_isa::gfx9::regs::{Range, UNITS};
use rocjitsu_isa::{Inst, Target};

/// A wait counter.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Counter {
    Vm,
    Lgkm,
    Exp,
    /// GFX10/GFX11: vector memory stores.
    Vs,
    /// GFX12: loads, stores, sampler, BVH, LDS, scalar memory and messages.
    Load,
    Store,
    Sample,
    Bvh,
    Ds,
    Km,
}

impl Counter {
    pub const COUNT: usize = 10;

    /// The name in `s_waitcnt` syntax.
    pub fn name(self) -> &'static str {
        match self {
            Counter::Vm => "vmcnt",
            Counter::Lgkm => "lgkmcnt",
            Counter::Exp => "expcnt",
            Counter::Vs => "vscnt",
            Counter::Load => "loadcnt",
            Counter::Store => "storecnt",
            Counter::Sample => "samplecnt",
            Counter::Bvh => "bvhcnt",
            Counter::Ds => "dscnt",
            Counter::Km => "kmcnt",
        }
    }
}

/// A class of operations with one completion order: operations of an
/// in-order stream complete in issue order; the others in any order.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Stream {
    /// Vector memory (on GFX9 loads, stores and atomics together).
    Vmem,
    /// LDS instructions.
    Lds,
    /// GDS instructions.
    Gds,
    /// Scalar memory: unordered.
    Smem,
    /// `s_sendmsg`: unordered against scalar memory.
    Message,
    /// The LDS part of a FLAT instruction that addressed LDS: unordered.
    FlatLds,
}

impl Stream {
    pub const COUNT: usize = 6;

    pub fn in_order(self) -> bool {
        matches!(self, Stream::Vmem | Stream::Lds | Stream::Gds)
    }
}

/// One counter an instruction increments, and the stream it joins there.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Event {
    pub counter: Counter,
    pub stream: Stream,
}

/// What an instruction adds to the counters.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Events {
    pub list: [Option<Event>; 2],
    /// A FLAT (generic segment) instruction: also an `lgkmcnt` operation
    /// when a lane addresses LDS.
    pub flat: bool,
}

impl Events {
    pub fn is_empty(&self) -> bool {
        self.list[0].is_none()
    }

    pub fn iter(&self) -> impl Iterator<Item = Event> + '_ {
        self.list.iter().flatten().copied()
    }
}

/// The counts a wait instruction waits for (`None`: that counter is not
/// waited on).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Wait {
    pub counts: [Option<u16>; Counter::COUNT],
}

impl Wait {
    pub fn get(&self, c: Counter) -> Option<u16> {
        self.counts[c as usize]
    }
}

impl std::fmt::Display for Wait {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut sep = "";
        for (i, n) in self.counts.iter().enumerate() {
            if let Some(n) = n {
                write!(f, "{sep}{}({n})", COUNTERS[i].name())?;
                sep = " ";
            }
        }
        Ok(())
    }
}

const COUNTERS: [Counter; Counter::COUNT] = [
    Counter::Vm,
    Counter::Lgkm,
    Counter::Exp,
    Counter::Vs,
    Counter::Load,
    Counter::Store,
    Counter::Sample,
    Counter::Bvh,
    Counter::Ds,
    Counter::Km,
];

/// A target's counters.
#[derive(Copy, Clone, Debug)]
pub struct Model {
    pub target: Target,
}

impl Model {
    pub fn new(target: Target) -> Model {
        Model { target }
    }

    /// The counters the target has.
    pub fn counters(&self) -> &'static [Counter] {
        &[Counter::Vm, Counter::Lgkm, Counter::Exp]
    }

    /// The counters `inst` increments.
    pub fn events(&self, inst: &Inst) -> Events {
        let ev = |counter, stream| Some(Event { counter, stream });
        let name = inst.mnemonic();
        match inst.body() {
            Body::Smem(_) => Events {
                list: [ev(Counter::Lgkm, Stream::Smem), None],
                flat: false,
            },
            Body::Sopp(_) if matches!(name, "s_sendmsg" | "s_sendmsghalt") => Events {
                list: [ev(Counter::Lgkm, Stream::Message), None],
                flat: false,
            },
            Body::Ds(d) if name != "ds_nop" => Events {
                list: [
                    ev(Counter::Lgkm, if d.gds { Stream::Gds } else { Stream::Lds }),
                    None,
                ],
                flat: false,
            },
            Body::Flat(f) => Events {
                list: [ev(Counter::Vm, Stream::Vmem), None],
                flat: f.seg == 0,
            },
            Body::Mubuf(b) | Body::Mtbuf(b) if b.op.has_ops || b.lds => Events {
                list: [ev(Counter::Vm, Stream::Vmem), None],
                flat: false,
            },
            Body::Mimg(_) => Events {
                list: [ev(Counter::Vm, Stream::Vmem), None],
                flat: false,
            },
            _ => Events::default(),
        }
    }

    /// What `inst` waits for, if it is a wait.
    pub fn wait(&self, inst: &Inst) -> Option<Wait> {
        let Body::Sopp(s) = inst.body() else {
            return None;
        };
        if s.row.name != "s_waitcnt" {
            return None;
        }
        let (vm, exp, lgkm) = rocjitsu_isa::gfx9::sop::Sopp::waitcnt(s.simm16);
        let mut w = Wait::default();
        // The largest value of a field means "do not wait on it".
        for (c, v, max) in [
            (Counter::Vm, vm, 63),
            (Counter::Exp, exp, 7),
            (Counter::Lgkm, lgkm, 15),
        ] {
            if v < max {
                w.counts[c as usize] = Some(v);
            }
        }
        Some(w)
    }
}

/// An operation that may still be in flight.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Op<T> {
    /// The registers it writes when it completes (its result).
    pub dst: [Option<Range>; 2],
    /// What the caller attached when it issued (its PC, say).
    pub tag: T,
    /// Whether it writes memory that other waves of the workgroup read
    /// after a barrier (an LDS or GDS store or atomic).
    pub writes_shared: bool,
    /// Issue sequence numbers in each stream it joined.
    seq: [Option<(Stream, u64)>; 2],
    /// Its counters, in the order of `seq`.
    counters: [Option<Counter>; 2],
    live: bool,
}

impl<T> Op<T> {
    /// The counters whose waits would prove it complete.
    pub fn counters(&self) -> impl Iterator<Item = Counter> + '_ {
        self.counters.iter().flatten().copied()
    }
}

/// The operations of one wave that its waits have not yet proven
/// complete, with a per-register index of those that will write it.
pub struct Pending<T> {
    ops: Vec<Op<T>>,
    free: Vec<u32>,
    /// Per register unit: 1 + the index in `ops` of the youngest
    /// outstanding operation writing it (0: none).
    writer: Box<[u32; UNITS]>,
    /// Operations issued so far per (counter, stream).
    issued: [[u64; Stream::COUNT]; Counter::COUNT],
}

impl<T: Copy> Default for Pending<T> {
    fn default() -> Self {
        Pending {
            ops: Vec::new(),
            free: Vec::new(),
            writer: Box::new([0; UNITS]),
            issued: [[0; Stream::COUNT]; Counter::COUNT],
        }
    }
}

impl<T: Copy> Pending<T> {
    /// Forgets everything (a new wave).
    pub fn clear(&mut self) {
        for op in &self.ops {
            if op.live {
                for r in op.dst.iter().flatten() {
                    for u in r.units() {
                        self.writer[usize::from(u)] = 0;
                    }
                }
            }
        }
        self.ops.clear();
        self.free.clear();
        self.issued = [[0; Stream::COUNT]; Counter::COUNT];
    }

    pub fn is_empty(&self) -> bool {
        self.ops.len() == self.free.len()
    }

    /// Records an operation: `events` (with the FLAT part, when `flat_lds`
    /// says a lane addressed LDS), its result registers, whether it writes
    /// shared memory, and a tag for reports.
    pub fn issue(
        &mut self,
        events: &Events,
        flat_lds: bool,
        dst: impl Iterator<Item = Range>,
        writes_shared: bool,
        tag: T,
    ) {
        let lds_part = (events.flat && flat_lds).then_some(Event {
            counter: Counter::Lgkm,
            stream: Stream::FlatLds,
        });
        if events.is_empty() && lds_part.is_none() {
            return;
        }
        let mut op = Op {
            dst: [None; 2],
            tag,
            writes_shared,
            seq: [None; 2],
            counters: [None; 2],
            live: true,
        };
        for (i, e) in events.iter().chain(lds_part).take(2).enumerate() {
            let n = &mut self.issued[e.counter as usize][e.stream as usize];
            *n += 1;
            op.seq[i] = Some((e.stream, *n));
            op.counters[i] = Some(e.counter);
        }
        for (slot, r) in op.dst.iter_mut().zip(dst) {
            *slot = Some(r);
        }
        let idx = match self.free.pop() {
            Some(i) => {
                self.ops[i as usize] = op;
                i
            }
            None => {
                self.ops.push(op);
                (self.ops.len() - 1) as u32
            }
        };
        for r in op.dst.iter().flatten() {
            for u in r.units() {
                self.writer[usize::from(u)] = idx + 1;
            }
        }
    }

    /// Applies a wait: every operation it proves complete is dropped.
    pub fn wait(&mut self, w: &Wait) {
        for i in 0..self.ops.len() {
            let op = self.ops[i];
            if !op.live {
                continue;
            }
            let done = op.counters.iter().zip(op.seq.iter()).any(|(c, s)| {
                let (Some(c), Some((stream, seq))) = (c, s) else {
                    return false;
                };
                match w.get(*c) {
                    None => false,
                    Some(0) => true,
                    Some(n) => {
                        stream.in_order()
                            && self.issued[*c as usize][*stream as usize] - seq >= u64::from(n)
                    }
                }
            });
            if done {
                self.retire(i);
            }
        }
    }

    fn retire(&mut self, i: usize) {
        let op = self.ops[i];
        self.ops[i].live = false;
        self.free.push(i as u32);
        for r in op.dst.iter().flatten() {
            for u in r.units() {
                if self.writer[usize::from(u)] != i as u32 + 1 {
                    continue;
                }
                // An older operation may still write the register too.
                let older = self
                    .ops
                    .iter()
                    .enumerate()
                    .filter(|(_, o)| o.live && o.dst.iter().flatten().any(|d| d.contains(u)))
                    .max_by_key(|(_, o)| o.seq[0].map_or(0, |x| x.1))
                    .map_or(0, |(k, _)| k as u32 + 1);
                self.writer[usize::from(u)] = older;
            }
        }
    }

    /// Whether an outstanding operation will write a register of `r`.
    #[inline]
    pub fn any_writer(&self, r: Range) -> bool {
        r.units().any(|u| self.writer[usize::from(u)] != 0)
    }

    /// Every outstanding operation that will write a register of `r`, with
    /// its destination range that overlaps `r`.
    pub fn writers_of(&self, r: Range) -> impl Iterator<Item = (Range, &Op<T>)> {
        let hit = self.any_writer(r);
        self.ops
            .iter()
            .filter(move |o| hit && o.live)
            .filter_map(move |o| {
                o.dst
                    .iter()
                    .flatten()
                    .find(|d| d.overlaps(r))
                    .map(|d| (*d, o))
            })
    }

    /// The youngest outstanding operation that will write a register of
    /// `r`, if any.
    pub fn writer_of(&self, r: Range) -> Option<(Range, &Op<T>)> {
        self.writers_of(r)
            .max_by_key(|(_, o)| o.seq[0].map_or(0, |x| x.1))
    }

    /// Outstanding operations that write shared memory (LDS/GDS).
    pub fn shared_writes(&self) -> impl Iterator<Item = &Op<T>> {
        self.ops.iter().filter(|o| o.live && o.writes_shared)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocjitsu_isa::gfx9::regs::VGPR0;

    fn vm() -> Events {
        Events {
            list: [
                Some(Event {
                    counter: Counter::Vm,
                    stream: Stream::Vmem,
                }),
                None,
            ],
            flat: false,
        }
    }

    fn lgkm(stream: Stream) -> Events {
        Events {
            list: [
                Some(Event {
                    counter: Counter::Lgkm,
                    stream,
                }),
                None,
            ],
            flat: false,
        }
    }

    fn wait(c: Counter, n: u16) -> Wait {
        let mut w = Wait::default();
        w.counts[c as usize] = Some(n);
        w
    }

    fn v(i: u16) -> Range {
        Range::new(VGPR0 + i, 1)
    }

    #[test]
    fn in_order_waits_retire_the_oldest() {
        let mut p = Pending::<u32>::default();
        p.issue(&vm(), false, [v(0)].into_iter(), false, 1);
        p.issue(&vm(), false, [v(1)].into_iter(), false, 2);
        p.issue(&vm(), false, std::iter::empty(), false, 3);
        p.wait(&wait(Counter::Vm, 2));
        assert!(p.writer_of(v(0)).is_none(), "two younger: complete");
        assert_eq!(p.writer_of(v(1)).map(|x| x.1.tag), Some(2));
        p.wait(&wait(Counter::Lgkm, 0));
        assert!(
            p.writer_of(v(1)).is_some(),
            "another counter proves nothing"
        );
        p.wait(&wait(Counter::Vm, 1));
        assert!(p.writer_of(v(1)).is_none());
        assert!(!p.is_empty(), "the store is still in flight");
        p.wait(&wait(Counter::Vm, 0));
        assert!(p.is_empty());
    }

    #[test]
    fn scalar_loads_complete_only_at_zero() {
        let mut p = Pending::<u32>::default();
        p.issue(
            &lgkm(Stream::Smem),
            false,
            [Range::new(0, 2)].into_iter(),
            false,
            1,
        );
        p.issue(&lgkm(Stream::Lds), false, [v(3)].into_iter(), false, 2);
        p.issue(&lgkm(Stream::Lds), false, [v(4)].into_iter(), false, 3);
        p.wait(&wait(Counter::Lgkm, 1));
        assert!(p.writer_of(Range::new(1, 1)).is_some(), "unordered");
        assert!(p.writer_of(v(3)).is_none(), "one younger LDS op");
        assert!(p.writer_of(v(4)).is_some());
        p.wait(&wait(Counter::Lgkm, 0));
        assert!(p.is_empty());
    }

    #[test]
    fn flat_to_lds_is_unordered_in_lgkmcnt() {
        let ev = Events { flat: true, ..vm() };
        let mut p = Pending::<u32>::default();
        p.issue(&ev, true, [v(0)].into_iter(), false, 1);
        p.issue(&lgkm(Stream::Lds), false, [v(1)].into_iter(), false, 2);
        p.wait(&wait(Counter::Lgkm, 1));
        assert!(p.writer_of(v(0)).is_some());
        p.wait(&wait(Counter::Vm, 0));
        assert!(p.writer_of(v(0)).is_none(), "vmcnt(0) proves it complete");
    }

    #[test]
    fn an_older_load_still_writes_after_a_younger_one_completes() {
        let mut p = Pending::<u32>::default();
        p.issue(&vm(), false, [v(3)].into_iter(), false, 1);
        p.issue(
            &lgkm(Stream::Lds),
            false,
            [Range::new(VGPR0 + 2, 2)].into_iter(),
            false,
            2,
        );
        let tags: Vec<u32> = p.writers_of(v(3)).map(|x| x.1.tag).collect();
        assert_eq!(tags, [1, 2]);
        assert_eq!(p.writer_of(v(3)).map(|x| x.1.tag), Some(2), "the youngest");
        p.wait(&wait(Counter::Lgkm, 0));
        assert_eq!(p.writer_of(v(3)).map(|x| x.1.tag), Some(1));
        assert!(p.writer_of(v(2)).is_none());
    }

    #[test]
    fn decodes_s_waitcnt() {
        let m = Model::new(Target::Gfx942);
        // s_waitcnt vmcnt(3) lgkmcnt(0)
        let i = rocjitsu_isa::decode(Target::Gfx942, &0xbf8c_0073u32.to_le_bytes()).unwrap();
        let w = m.wait(&i).unwrap();
        assert_eq!(i.to_string(), "s_waitcnt vmcnt(3) lgkmcnt(0)");
        assert_eq!(w.get(Counter::Vm), Some(3));
        assert_eq!(w.get(Counter::Lgkm), Some(0));
        assert_eq!(w.get(Counter::Exp), None);
        assert_eq!(w.to_string(), "vmcnt(3) lgkmcnt(0)");
    }
}
