//! The AMD loader extension (hsa_ven_amd_loader.h). Its table is not part
//! of the tools API table: the application asks for it with
//! `hsa_system_get_major_extension_table`, whose hook patches the copy it
//! receives here.

use std::ffi::c_void;
use std::sync::OnceLock;

use crate::abi::*;

type GetInfo = unsafe extern "C" fn(LoadedCodeObject, u32, *mut c_void) -> Status;
type FromFile = unsafe extern "C" fn(i32, usize, usize, *mut Reader) -> Status;

/// ROCr's loader entries, captured from the first table handed out.
static GET_INFO: OnceLock<GetInfo> = OnceLock::new();
static FROM_FILE: OnceLock<FromFile> = OnceLock::new();

/// The runtime's `code_object_reader_create_from_file_with_offset_size`, if seen.
pub fn original_from_file() -> Option<FromFile> {
    FROM_FILE.get().copied()
}

unsafe extern "C" fn loaded_code_object_get_info(
    lco: LoadedCodeObject,
    attribute: u32,
    value: *mut c_void,
) -> Status {
    crate::guard("hsa_ven_amd_loader_loaded_code_object_get_info", || {
        let Some(orig) = GET_INFO.get() else {
            return HSA_STATUS_ERROR;
        };
        // SAFETY: forwards the caller's arguments to ROCr's entry.
        let s = unsafe { orig(lco, attribute, value) };
        if s == HSA_STATUS_SUCCESS
            && attribute == HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_AGENT
            && !value.is_null()
        {
            // SAFETY: for this attribute the value is the hsa_agent_t ROCr wrote.
            unsafe { *value.cast::<Agent>() = super::public(*value.cast::<Agent>()) };
        }
        s
    })
}

unsafe extern "C" fn create_from_file_with_offset_size(
    file: i32,
    offset: usize,
    size: usize,
    reader: *mut Reader,
) -> Status {
    crate::guard(
        "hsa_ven_amd_loader_code_object_reader_create_from_file_with_offset_size",
        // SAFETY: the caller's out pointer (the API's contract).
        || unsafe { crate::code::create_from_file(file, offset, size, reader) },
    )
}

/// Replaces, in a loader table of `len` bytes that ROCr just filled, the
/// entries that return an agent or read a file.
///
/// # Safety
/// `table` points to `len` writable bytes of a loader table.
pub unsafe fn patch(table: *mut c_void, len: usize) {
    if table.is_null() {
        return;
    }
    let t = table.cast::<Fp>();
    let get_info = std::mem::offset_of!(LoaderTable, loaded_code_object_get_info);
    let from_file = std::mem::offset_of!(
        LoaderTable,
        code_object_reader_create_from_file_with_offset_size
    );
    if len >= get_info + 8 {
        // SAFETY: the slot lies within the caller's `len` bytes.
        let slot = unsafe { &mut *t.add(get_info / 8) };
        if let Some(f) = *slot {
            // SAFETY: ROCr's entry of this signature (hsa_ven_amd_loader.h).
            let typed = unsafe { std::mem::transmute::<unsafe extern "C" fn(), GetInfo>(f) };
            if typed as usize != loaded_code_object_get_info as GetInfo as usize {
                let _ = GET_INFO.set(typed);
                // SAFETY: our entry of the same signature, stored untyped.
                *slot = Some(unsafe {
                    std::mem::transmute::<GetInfo, unsafe extern "C" fn()>(
                        loaded_code_object_get_info,
                    )
                });
            }
        }
    }
    if len >= from_file + 8 {
        // SAFETY: the slot lies within the caller's `len` bytes.
        let slot = unsafe { &mut *t.add(from_file / 8) };
        if let Some(f) = *slot {
            // SAFETY: ROCr's entry of this signature (hsa_ven_amd_loader.h).
            let typed = unsafe { std::mem::transmute::<unsafe extern "C" fn(), FromFile>(f) };
            if typed as usize != create_from_file_with_offset_size as FromFile as usize {
                let _ = FROM_FILE.set(typed);
                // SAFETY: our entry of the same signature, stored untyped.
                *slot = Some(unsafe {
                    std::mem::transmute::<FromFile, unsafe extern "C" fn()>(
                        create_from_file_with_offset_size,
                    )
                });
            }
        }
    }
}
