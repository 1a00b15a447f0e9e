//! HSA signals as the packet processor sees them: an `amd_signal_t` (ROCr
//! `amd_hsa_signal.h`, 64 bytes) whose address is the `hsa_signal_t`
//! handle, and atomic loads and stores of queue words.

use super::Host;
use crate::mem::{MemFault, Tlb, Vm};
use std::sync::atomic::{Ordering, fence};

/// `amd_signal_t` field offsets: `kind` is at 0.
pub const VALUE: u64 = 8;
pub const EVENT_MAILBOX_PTR: u64 = 16;
pub const EVENT_ID: u64 = 24;
pub const START_TS: u64 = 32;
pub const END_TS: u64 = 40;

/// An atomic 64-bit load with acquire ordering.
pub fn load_u64(vm: &Vm, tlb: &mut Tlb, addr: u64) -> Result<u64, MemFault> {
    let v = vm.atomic_u64(tlb, addr, |_| None)?;
    fence(Ordering::Acquire);
    Ok(v)
}

/// An atomic 32-bit load with acquire ordering.
pub fn load_u32(vm: &Vm, tlb: &mut Tlb, addr: u64) -> Result<u32, MemFault> {
    let v = vm.atomic_u32(tlb, addr, |_| None)?;
    fence(Ordering::Acquire);
    Ok(v)
}

/// An atomic 64-bit store with release ordering.
pub fn store_u64(vm: &Vm, tlb: &mut Tlb, addr: u64, v: u64) -> Result<(), MemFault> {
    fence(Ordering::Release);
    vm.atomic_u64(tlb, addr, |_| Some(v))?;
    Ok(())
}

/// An atomic 32-bit store with release ordering.
pub fn store_u32(vm: &Vm, tlb: &mut Tlb, addr: u64, v: u32) -> Result<(), MemFault> {
    fence(Ordering::Release);
    vm.atomic_u32(tlb, addr, |_| Some(v))?;
    Ok(())
}

/// The value of the signal with handle `signal`.
pub fn value(vm: &Vm, tlb: &mut Tlb, signal: u64) -> Result<i64, MemFault> {
    Ok(load_u64(vm, tlb, signal.wrapping_add(VALUE))? as i64)
}

/// Completes a packet's completion signal as the CP's end-of-packet
/// sequence does: writes the start and end timestamps, decrements the value
/// and, for a signal with an event mailbox, writes the event id there and
/// raises the interrupt. A handle of 0 means no signal.
pub fn complete(
    vm: &Vm,
    tlb: &mut Tlb,
    host: &dyn Host,
    signal: u64,
    start: u64,
    end: u64,
) -> Result<(), MemFault> {
    if signal == 0 {
        return Ok(());
    }
    vm.write(tlb, signal.wrapping_add(START_TS), &start.to_le_bytes())?;
    vm.write(tlb, signal.wrapping_add(END_TS), &end.to_le_bytes())?;
    fence(Ordering::Release);
    let old = vm.atomic_u64(tlb, signal.wrapping_add(VALUE), |v| Some(v.wrapping_sub(1)))?;
    match interrupt(vm, tlb, host, signal)? {
        Some(id) => tracing::trace!(
            "signal 0x{signal:x} {old} -> {}: interrupt, event {id}",
            old.wrapping_sub(1)
        ),
        None => tracing::trace!(
            "signal 0x{signal:x} {old} -> {} (no mailbox)",
            old.wrapping_sub(1)
        ),
    }
    Ok(())
}

/// The interrupt a signal's change raises: for a signal with an event
/// mailbox, writes the signal's event id there and signals that event;
/// the event id, or None when the signal has no mailbox.
pub fn interrupt(
    vm: &Vm,
    tlb: &mut Tlb,
    host: &dyn Host,
    signal: u64,
) -> Result<Option<u32>, MemFault> {
    let mailbox = load_u64(vm, tlb, signal.wrapping_add(EVENT_MAILBOX_PTR))?;
    if mailbox == 0 {
        return Ok(None);
    }
    let id = vm.read_u32(tlb, signal.wrapping_add(EVENT_ID))?;
    store_u32(vm, tlb, mailbox, id)?;
    host.signal_event(id);
    Ok(Some(id))
}
