//! The settings of the hooks: the `dbt_guest` block of the file named by
//! `ROCJITSU_DBT_CONFIG`, and the environment overrides.

use crate::log::Level;
use crate::map::Selection;

/// What the hooks do (`ROCJITSU_DBT_MODE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Mode {
    /// DBT guest mode: the guest agent is shown in the host's place.
    #[default]
    Guest,
    /// No guest identity: the application sees the host agents, and a
    /// `guest_isa` code object loaded on a `host_isa` agent is translated.
    Hotswap,
}

impl Mode {
    /// Reads `ROCJITSU_DBT_MODE` (unset or empty: guest mode).
    pub fn parse(value: Option<&str>) -> Result<Mode, String> {
        match value.map(str::trim) {
            None | Some("") | Some("guest") => Ok(Mode::Guest),
            Some("hotswap") => Ok(Mode::Hotswap),
            Some(v) => Err(format!(
                "ROCJITSU_DBT_MODE={v}: expected `guest` (show the guest agent) or `hotswap` (translate guest code objects loaded on the host agent, no guest identity)"
            )),
        }
    }
}

/// What the hooks need from the configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    pub path: String,
    pub selection: Selection,
    pub log_level: Level,
    pub mode: Mode,
}

/// Reads the `dbt_guest` block; `Ok(None)` when it says `"enabled": false`.
pub fn parse(path: &str, text: &str) -> Result<Option<Config>, String> {
    let root: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("{path}: not valid JSON: {e}"))?;
    let block = root.get("dbt_guest").ok_or_else(|| {
        format!("{path}: has no `dbt_guest` block; ROCJITSU_DBT_CONFIG must name a guest-mode configuration such as configs/guest_gfx950_on_gfx942.json")
    })?;
    let field = |name: &str| block.get(name);
    let string = |name: &str| -> Result<String, String> {
        field(name)
            .and_then(|v| v.as_str())
            .map(str::to_owned)
            .ok_or_else(|| {
                format!("{path}: dbt_guest.{name}: expected a string such as \"gfx950\"")
            })
    };
    let enabled = match field("enabled") {
        None => true,
        Some(v) => v
            .as_bool()
            .ok_or_else(|| format!("{path}: dbt_guest.enabled: expected true or false"))?,
    };
    if !enabled {
        return Ok(None);
    }
    let host_gpu_id = match field("host_gpu_id") {
        None => 0,
        Some(v) => v
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| format!("{path}: dbt_guest.host_gpu_id: expected a GPU index from 0"))?,
    };
    let log_level = match field("log_level") {
        None => Level::Warn,
        Some(v) => v.as_str().and_then(Level::parse).ok_or_else(|| {
            format!(
                "{path}: dbt_guest.log_level: expected one of off, error, warn, info, debug, trace"
            )
        })?,
    };
    Ok(Some(Config {
        path: path.to_owned(),
        selection: Selection {
            guest_isa: string("guest_isa")?,
            host_isa: string("host_isa")?,
            host_gpu_id,
            guest_node: None,
            host_node: None,
        },
        log_level,
        mode: Mode::Guest,
    }))
}

/// Reads a KFD node override (`ROCJITSU_DBT_GUEST_NODE`, `ROCJITSU_DBT_HOST_NODE`).
pub fn node_override(name: &str, value: Option<&str>) -> Result<Option<u32>, String> {
    match value {
        None | Some("") => Ok(None),
        Some(v) => v
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| format!("{name}={v}: expected a KFD node id (a number)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_shipped_block() {
        let text = r#"{"version": 1, "dbt_guest": {"enabled": true, "guest_isa": "gfx950",
            "host_isa": "gfx942", "host_gpu_id": 0, "execution_backend": "simulator",
            "simulator_config": "gfx942_cdna3_kmd.json", "log_level": "info"}}"#;
        let c = parse("c.json", text).unwrap().unwrap();
        assert_eq!(c.selection.guest_isa, "gfx950");
        assert_eq!(c.selection.host_isa, "gfx942");
        assert_eq!(c.selection.host_gpu_id, 0);
        assert_eq!(c.log_level, Level::Info);
    }

    #[test]
    fn disabled_block_is_inert_and_bad_input_names_the_field() {
        let off =
            r#"{"dbt_guest": {"enabled": false, "guest_isa": "gfx950", "host_isa": "gfx942"}}"#;
        assert_eq!(parse("c.json", off).unwrap(), None);
        let e = parse("c.json", r#"{"gpus": []}"#).unwrap_err();
        assert!(e.contains("c.json: has no `dbt_guest` block"), "{e}");
        let e = parse(
            "c.json",
            r#"{"dbt_guest": {"guest_isa": 950, "host_isa": "gfx942"}}"#,
        )
        .unwrap_err();
        assert!(e.contains("dbt_guest.guest_isa"), "{e}");
        let e = parse(
            "c.json",
            r#"{"dbt_guest": {"guest_isa": "gfx950", "host_isa": "gfx942", "log_level": "loud"}}"#,
        )
        .unwrap_err();
        assert!(e.contains("dbt_guest.log_level"), "{e}");
        assert!(parse("c.json", "{").unwrap_err().contains("not valid JSON"));
    }

    #[test]
    fn modes() {
        assert_eq!(Mode::parse(None), Ok(Mode::Guest));
        assert_eq!(Mode::parse(Some("")), Ok(Mode::Guest));
        assert_eq!(Mode::parse(Some("hotswap")), Ok(Mode::Hotswap));
        let e = Mode::parse(Some("swap")).unwrap_err();
        assert!(e.contains("ROCJITSU_DBT_MODE=swap"), "{e}");
    }

    #[test]
    fn node_overrides() {
        assert_eq!(node_override("X", None), Ok(None));
        assert_eq!(node_override("X", Some("3")), Ok(Some(3)));
        assert!(
            node_override("X", Some("three"))
                .unwrap_err()
                .contains("X=three")
        );
    }
}
