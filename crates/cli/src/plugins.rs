//! The execution-plugin options shared by `rocjitsu` (local and daemon
//! modes) and `run-kernel`, and `rocjitsu plugins`.

use anyhow::Result;
use rocjitsu_gpu::plugin::{BUILTINS, Output, Plugins, Spec};
use std::path::PathBuf;

#[derive(clap::Args, Clone, Debug, Default)]
pub struct PluginArgs {
    /// Enable an execution plugin, with options: NAME[:key=value,...] (repeatable; `rocjitsu plugins` lists them), e.g. --plugin metrics:format=jsonl
    #[arg(long = "plugin", value_name = "NAME[:K=V,...]")]
    pub plugin: Vec<String>,
    /// Directory for the plugins' output files (default: stderr; a trace goes to the current directory)
    #[arg(long, value_name = "DIR")]
    pub plugin_out: Option<PathBuf>,
}

impl PluginArgs {
    /// The `--plugin` specs, parsed and checked (names and options).
    pub fn specs(&self) -> Result<Vec<Spec>> {
        let specs = self
            .plugin
            .iter()
            .map(|s| Spec::parse(s).map_err(|e| anyhow::anyhow!("--plugin {s}: {e}")))
            .collect::<Result<Vec<_>>>()?;
        Plugins::check(&specs)?;
        Ok(specs)
    }

    /// The plugins of a `run-kernel`: `--plugin` then `ROCJITSU_PLUGINS`,
    /// writing to `--plugin-out` (else `ROCJITSU_PLUGIN_OUT`).
    pub fn plugins(&self) -> Result<Option<Plugins>> {
        let mut specs = self.specs()?;
        if let Ok(v) = std::env::var(rocjitsu_config::env::PLUGINS) {
            specs.extend(
                Spec::parse_list(&v)
                    .map_err(|e| anyhow::anyhow!("{}: {e}", rocjitsu_config::env::PLUGINS))?,
            );
        }
        if specs.is_empty() {
            return Ok(None);
        }
        let dir = self.plugin_out.clone().or_else(|| {
            std::env::var_os(rocjitsu_config::env::PLUGIN_OUT)
                .filter(|d| !d.is_empty())
                .map(PathBuf::from)
        });
        Ok(Some(Plugins::new(&specs, &Output { dir })?))
    }
}

/// `rocjitsu plugins`: one line per built-in plugin.
pub fn list() -> Result<std::process::ExitCode> {
    let w = BUILTINS.iter().map(|b| b.name.len()).max().unwrap_or(0);
    for b in BUILTINS {
        println!("{:<w$}  {} [options: {}]", b.name, b.about, b.options);
    }
    Ok(std::process::ExitCode::SUCCESS)
}
