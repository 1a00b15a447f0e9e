//! Image extension entries (hsa_ext_image.h): every one takes the agent first.

use std::ffi::c_void;

use super::{exec, hook};
use crate::abi::*;

hook!(
    ImageExtTable,
    fn hsa_ext_image_get_capability(
        agent: Agent,
        geometry: u32,
        format: *const c_void,
        mask: *mut u32,
    ) {
        // SAFETY: forwards the caller's arguments with the agent mapped.
        unsafe { orig()(exec(agent), geometry, format, mask) }
    }
);

hook!(
    ImageExtTable,
    fn hsa_ext_image_data_get_info(
        agent: Agent,
        descriptor: *const c_void,
        access: u32,
        info: *mut c_void,
    ) {
        // SAFETY: forwards the caller's arguments with the agent mapped.
        unsafe { orig()(exec(agent), descriptor, access, info) }
    }
);

hook!(
    ImageExtTable,
    fn hsa_ext_image_create(
        agent: Agent,
        descriptor: *const c_void,
        data: *const c_void,
        access: u32,
        image: *mut Image,
    ) {
        // SAFETY: forwards the caller's arguments with the agent mapped.
        unsafe { orig()(exec(agent), descriptor, data, access, image) }
    }
);

hook!(
    ImageExtTable,
    fn hsa_ext_image_import(
        agent: Agent,
        src: *const c_void,
        row_pitch: usize,
        slice_pitch: usize,
        image: Image,
        region: *const c_void,
    ) {
        // SAFETY: forwards the caller's arguments with the agent mapped.
        unsafe { orig()(exec(agent), src, row_pitch, slice_pitch, image, region) }
    }
);

hook!(
    ImageExtTable,
    fn hsa_ext_image_export(
        agent: Agent,
        image: Image,
        dst: *mut c_void,
        row_pitch: usize,
        slice_pitch: usize,
        region: *const c_void,
    ) {
        // SAFETY: forwards the caller's arguments with the agent mapped.
        unsafe { orig()(exec(agent), image, dst, row_pitch, slice_pitch, region) }
    }
);

hook!(
    ImageExtTable,
    fn hsa_ext_image_copy(
        agent: Agent,
        src: Image,
        src_offset: *const c_void,
        dst: Image,
        dst_offset: *const c_void,
        range: *const c_void,
    ) {
        // SAFETY: forwards the caller's arguments with the agent mapped.
        unsafe { orig()(exec(agent), src, src_offset, dst, dst_offset, range) }
    }
);

hook!(
    ImageExtTable,
    fn hsa_ext_image_clear(agent: Agent, image: Image, data: *const c_void, region: *const c_void) {
        // SAFETY: forwards the caller's arguments with the agent mapped.
        unsafe { orig()(exec(agent), image, data, region) }
    }
);

hook!(
    ImageExtTable,
    fn hsa_ext_image_destroy(agent: Agent, image: Image) {
        // SAFETY: forwards the caller's arguments with the agent mapped.
        unsafe { orig()(exec(agent), image) }
    }
);

hook!(
    ImageExtTable,
    fn hsa_ext_sampler_create(agent: Agent, descriptor: *const c_void, sampler: *mut Sampler) {
        // SAFETY: forwards the caller's arguments with the agent mapped.
        unsafe { orig()(exec(agent), descriptor, sampler) }
    }
);

hook!(
    ImageExtTable,
    fn hsa_ext_sampler_destroy(agent: Agent, sampler: Sampler) {
        // SAFETY: forwards the caller's arguments with the agent mapped.
        unsafe { orig()(exec(agent), sampler) }
    }
);

hook!(
    ImageExtTable,
    fn hsa_ext_image_get_capability_with_layout(
        agent: Agent,
        geometry: u32,
        format: *const c_void,
        layout: u32,
        mask: *mut u32,
    ) {
        // SAFETY: forwards the caller's arguments with the agent mapped.
        unsafe { orig()(exec(agent), geometry, format, layout, mask) }
    }
);

hook!(
    ImageExtTable,
    fn hsa_ext_image_data_get_info_with_layout(
        agent: Agent,
        descriptor: *const c_void,
        access: u32,
        layout: u32,
        row_pitch: usize,
        slice_pitch: usize,
        info: *mut c_void,
    ) {
        // SAFETY: forwards the caller's arguments with the agent mapped.
        unsafe {
            orig()(
                exec(agent),
                descriptor,
                access,
                layout,
                row_pitch,
                slice_pitch,
                info,
            )
        }
    }
);

hook!(
    ImageExtTable,
    fn hsa_ext_image_create_with_layout(
        agent: Agent,
        descriptor: *const c_void,
        data: *const c_void,
        access: u32,
        layout: u32,
        row_pitch: usize,
        slice_pitch: usize,
        image: *mut Image,
    ) {
        // SAFETY: forwards the caller's arguments with the agent mapped.
        unsafe {
            orig()(
                exec(agent),
                descriptor,
                data,
                access,
                layout,
                row_pitch,
                slice_pitch,
                image,
            )
        }
    }
);

hook!(
    ImageExtTable,
    fn hsa_ext_sampler_create_v2(agent: Agent, descriptor: *const c_void, sampler: *mut Sampler) {
        // SAFETY: forwards the caller's arguments with the agent mapped.
        unsafe { orig()(exec(agent), descriptor, sampler) }
    }
);

/// The entries installed in the image extension table.
pub fn table() -> Vec<(usize, Fp)> {
    vec![
        hsa_ext_image_get_capability::entry(),
        hsa_ext_image_data_get_info::entry(),
        hsa_ext_image_create::entry(),
        hsa_ext_image_import::entry(),
        hsa_ext_image_export::entry(),
        hsa_ext_image_copy::entry(),
        hsa_ext_image_clear::entry(),
        hsa_ext_image_destroy::entry(),
        hsa_ext_sampler_create::entry(),
        hsa_ext_sampler_destroy::entry(),
        hsa_ext_image_get_capability_with_layout::entry(),
        hsa_ext_image_data_get_info_with_layout::entry(),
        hsa_ext_image_create_with_layout::entry(),
        hsa_ext_sampler_create_v2::entry(),
    ]
}
