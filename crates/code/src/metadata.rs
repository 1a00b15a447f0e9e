//! The `NT_AMDGPU_METADATA` note of code object v3+ (AMDGPUUsage "Code
//! Object V3 Metadata" and later): a MessagePack map with `amdhsa.version`,
//! `amdhsa.target` and `amdhsa.kernels`. Typed fields cover what the
//! disassembler and loader use; `raw` keeps every key.

use crate::msgpack::Value;

/// `.value_kind` of a kernel argument.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ValueKind {
    ByValue,
    GlobalBuffer,
    DynamicSharedPointer,
    Sampler,
    Image,
    Pipe,
    Queue,
    HiddenGlobalOffsetX,
    HiddenGlobalOffsetY,
    HiddenGlobalOffsetZ,
    HiddenNone,
    HiddenPrintfBuffer,
    HiddenHostcallBuffer,
    HiddenDefaultQueue,
    HiddenCompletionAction,
    HiddenMultigridSyncArg,
    HiddenBlockCountX,
    HiddenBlockCountY,
    HiddenBlockCountZ,
    HiddenGroupSizeX,
    HiddenGroupSizeY,
    HiddenGroupSizeZ,
    HiddenRemainderX,
    HiddenRemainderY,
    HiddenRemainderZ,
    HiddenGridDims,
    HiddenHeapV1,
    HiddenDynamicLdsSize,
    HiddenPrivateBase,
    HiddenSharedBase,
    HiddenQueuePtr,
    /// A kind this reader does not know, as written.
    Other(String),
}

const VALUE_KINDS: &[(&str, ValueKind)] = &[
    ("by_value", ValueKind::ByValue),
    ("global_buffer", ValueKind::GlobalBuffer),
    ("dynamic_shared_pointer", ValueKind::DynamicSharedPointer),
    ("sampler", ValueKind::Sampler),
    ("image", ValueKind::Image),
    ("pipe", ValueKind::Pipe),
    ("queue", ValueKind::Queue),
    ("hidden_global_offset_x", ValueKind::HiddenGlobalOffsetX),
    ("hidden_global_offset_y", ValueKind::HiddenGlobalOffsetY),
    ("hidden_global_offset_z", ValueKind::HiddenGlobalOffsetZ),
    ("hidden_none", ValueKind::HiddenNone),
    ("hidden_printf_buffer", ValueKind::HiddenPrintfBuffer),
    ("hidden_hostcall_buffer", ValueKind::HiddenHostcallBuffer),
    ("hidden_default_queue", ValueKind::HiddenDefaultQueue),
    (
        "hidden_completion_action",
        ValueKind::HiddenCompletionAction,
    ),
    (
        "hidden_multigrid_sync_arg",
        ValueKind::HiddenMultigridSyncArg,
    ),
    ("hidden_block_count_x", ValueKind::HiddenBlockCountX),
    ("hidden_block_count_y", ValueKind::HiddenBlockCountY),
    ("hidden_block_count_z", ValueKind::HiddenBlockCountZ),
    ("hidden_group_size_x", ValueKind::HiddenGroupSizeX),
    ("hidden_group_size_y", ValueKind::HiddenGroupSizeY),
    ("hidden_group_size_z", ValueKind::HiddenGroupSizeZ),
    ("hidden_remainder_x", ValueKind::HiddenRemainderX),
    ("hidden_remainder_y", ValueKind::HiddenRemainderY),
    ("hidden_remainder_z", ValueKind::HiddenRemainderZ),
    ("hidden_grid_dims", ValueKind::HiddenGridDims),
    ("hidden_heap_v1", ValueKind::HiddenHeapV1),
    ("hidden_dynamic_lds_size", ValueKind::HiddenDynamicLdsSize),
    ("hidden_private_base", ValueKind::HiddenPrivateBase),
    ("hidden_shared_base", ValueKind::HiddenSharedBase),
    ("hidden_queue_ptr", ValueKind::HiddenQueuePtr),
];

impl ValueKind {
    /// Parses the metadata spelling; unknown kinds become [`ValueKind::Other`].
    pub fn parse(s: &str) -> ValueKind {
        VALUE_KINDS
            .iter()
            .find(|(n, _)| *n == s)
            .map(|(_, k)| k.clone())
            .unwrap_or_else(|| ValueKind::Other(s.to_string()))
    }

    /// The metadata spelling.
    pub fn as_str(&self) -> &str {
        match self {
            ValueKind::Other(s) => s,
            k => VALUE_KINDS
                .iter()
                .find(|(_, v)| v == k)
                .map(|(n, _)| *n)
                .unwrap_or(""),
        }
    }

    /// Hidden arguments are filled in by the runtime, not the caller.
    pub fn is_hidden(&self) -> bool {
        self.as_str().starts_with("hidden_")
    }
}

impl serde::Serialize for ValueKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// One entry of a kernel's `.args`.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct KernelArg {
    pub name: Option<String>,
    pub type_name: Option<String>,
    /// Byte offset in the kernarg segment.
    pub offset: u64,
    pub size: u64,
    pub value_kind: ValueKind,
    /// `global`, `constant`, `local`, `private`, `generic`, `region`.
    pub address_space: Option<String>,
    /// `read_only`, `write_only`, `read_write`.
    pub access: Option<String>,
    pub actual_access: Option<String>,
    pub pointee_align: Option<u64>,
    pub is_const: bool,
    pub is_restrict: bool,
    pub is_volatile: bool,
    pub is_pipe: bool,
}

/// One entry of `amdhsa.kernels`.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct KernelMeta {
    /// Source name (`.name`).
    pub name: String,
    /// Kernel descriptor symbol (`.symbol`, `name.kd`).
    pub symbol: String,
    pub args: Vec<KernelArg>,
    pub language: Option<String>,
    pub language_version: Vec<u64>,
    pub kernarg_segment_size: Option<u64>,
    pub kernarg_segment_align: Option<u64>,
    pub group_segment_fixed_size: Option<u64>,
    pub private_segment_fixed_size: Option<u64>,
    pub wavefront_size: Option<u64>,
    pub sgpr_count: Option<u64>,
    pub vgpr_count: Option<u64>,
    pub agpr_count: Option<u64>,
    pub max_flat_workgroup_size: Option<u64>,
    pub sgpr_spill_count: Option<u64>,
    pub vgpr_spill_count: Option<u64>,
    pub uses_dynamic_stack: Option<bool>,
    pub uniform_work_group_size: Option<bool>,
    pub workgroup_processor_mode: Option<bool>,
    pub reqd_workgroup_size: Option<Vec<u64>>,
    pub workgroup_size_hint: Option<Vec<u64>>,
    pub kind: Option<String>,
    /// The kernel's map with every key, including ones not typed above.
    pub raw: Value,
}

/// The whole metadata note.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Metadata {
    /// `amdhsa.version` (`[1, 2]` for code object v5).
    pub version: Vec<u64>,
    /// `amdhsa.target` (`amdgcn-amd-amdhsa--gfx942`).
    pub target: Option<String>,
    pub kernels: Vec<KernelMeta>,
    /// `amdhsa.printf` format strings.
    pub printf: Vec<String>,
    /// The whole decoded map.
    pub raw: Value,
}

fn u64s(v: Option<&Value>) -> Option<Vec<u64>> {
    v?.as_array()?.iter().map(Value::as_u64).collect()
}

fn string(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

fn num(v: &Value, key: &str) -> Option<u64> {
    v.get(key).and_then(Value::as_u64)
}

fn flag(v: &Value, key: &str) -> Option<bool> {
    v.get(key).and_then(Value::as_bool)
}

impl KernelArg {
    fn from_value(v: &Value) -> Result<KernelArg, String> {
        let kind = v
            .get(".value_kind")
            .and_then(Value::as_str)
            .ok_or("kernel argument without a string .value_kind")?;
        Ok(KernelArg {
            name: string(v, ".name"),
            type_name: string(v, ".type_name"),
            offset: num(v, ".offset").ok_or("kernel argument without an integer .offset")?,
            size: num(v, ".size").ok_or("kernel argument without an integer .size")?,
            value_kind: ValueKind::parse(kind),
            address_space: string(v, ".address_space"),
            access: string(v, ".access"),
            actual_access: string(v, ".actual_access"),
            pointee_align: num(v, ".pointee_align"),
            is_const: flag(v, ".is_const").unwrap_or(false),
            is_restrict: flag(v, ".is_restrict").unwrap_or(false),
            is_volatile: flag(v, ".is_volatile").unwrap_or(false),
            is_pipe: flag(v, ".is_pipe").unwrap_or(false),
        })
    }
}

impl KernelMeta {
    fn from_value(v: &Value) -> Result<KernelMeta, String> {
        if !matches!(v, Value::Map(_)) {
            return Err("amdhsa.kernels entry is not a map".into());
        }
        let args = match v.get(".args") {
            None => Vec::new(),
            Some(a) => a
                .as_array()
                .ok_or(".args is not an array")?
                .iter()
                .map(KernelArg::from_value)
                .collect::<Result<_, _>>()?,
        };
        Ok(KernelMeta {
            name: string(v, ".name").ok_or("kernel without a string .name")?,
            symbol: string(v, ".symbol").ok_or("kernel without a string .symbol")?,
            args,
            language: string(v, ".language"),
            language_version: u64s(v.get(".language_version")).unwrap_or_default(),
            kernarg_segment_size: num(v, ".kernarg_segment_size"),
            kernarg_segment_align: num(v, ".kernarg_segment_align"),
            group_segment_fixed_size: num(v, ".group_segment_fixed_size"),
            private_segment_fixed_size: num(v, ".private_segment_fixed_size"),
            wavefront_size: num(v, ".wavefront_size"),
            sgpr_count: num(v, ".sgpr_count"),
            vgpr_count: num(v, ".vgpr_count"),
            agpr_count: num(v, ".agpr_count"),
            max_flat_workgroup_size: num(v, ".max_flat_workgroup_size"),
            sgpr_spill_count: num(v, ".sgpr_spill_count"),
            vgpr_spill_count: num(v, ".vgpr_spill_count"),
            uses_dynamic_stack: flag(v, ".uses_dynamic_stack"),
            uniform_work_group_size: flag(v, ".uniform_work_group_size"),
            workgroup_processor_mode: flag(v, ".workgroup_processor_mode"),
            reqd_workgroup_size: u64s(v.get(".reqd_workgroup_size")),
            workgroup_size_hint: u64s(v.get(".workgroup_size_hint")),
            kind: string(v, ".kind"),
            raw: v.clone(),
        })
    }

    /// Arguments the caller passes (not `hidden_*`).
    pub fn explicit_args(&self) -> impl Iterator<Item = &KernelArg> {
        self.args.iter().filter(|a| !a.value_kind.is_hidden())
    }
}

impl Metadata {
    /// Types a decoded metadata map; the error says which key is malformed.
    pub fn from_value(v: Value) -> Result<Metadata, String> {
        if !matches!(v, Value::Map(_)) {
            return Err("metadata is not a map".into());
        }
        let kernels = match v.get("amdhsa.kernels") {
            None => Vec::new(),
            Some(k) => k
                .as_array()
                .ok_or("amdhsa.kernels is not an array")?
                .iter()
                .map(KernelMeta::from_value)
                .collect::<Result<_, _>>()?,
        };
        let printf = v
            .get("amdhsa.printf")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        Ok(Metadata {
            version: u64s(v.get("amdhsa.version")).unwrap_or_default(),
            target: string(&v, "amdhsa.target"),
            kernels,
            printf,
            raw: v,
        })
    }

    /// The kernel whose `.symbol` or `.name` is `name`.
    pub fn kernel(&self, name: &str) -> Option<&KernelMeta> {
        self.kernels
            .iter()
            .find(|k| k.symbol == name || k.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_kinds_round_trip_and_keep_unknowns() {
        for (n, k) in VALUE_KINDS {
            assert_eq!(&ValueKind::parse(n), k);
            assert_eq!(k.as_str(), *n);
        }
        let k = ValueKind::parse("hidden_new_thing");
        assert_eq!(k, ValueKind::Other("hidden_new_thing".into()));
        assert!(k.is_hidden());
        assert!(!ValueKind::GlobalBuffer.is_hidden());
    }

    #[test]
    fn malformed_kernels_are_errors() {
        let v = Value::Map(vec![(
            Value::Str("amdhsa.kernels".into()),
            Value::Array(vec![Value::Map(vec![(
                Value::Str(".name".into()),
                Value::Str("k".into()),
            )])]),
        )]);
        assert_eq!(
            Metadata::from_value(v).unwrap_err(),
            "kernel without a string .symbol"
        );
    }
}
