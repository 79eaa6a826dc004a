//! Implementations the runner can drive: the built-ins (this binary's `endpoint` mode) and external programs
//! declared in a TOML file. Both are a command line template plus the interop-runner environment, so they take
//! the same path through the runner.
//!
//! ```toml
//! [[implementation]]
//! name = "picoquic"
//! client = ["/opt/picoquic/picoquicdemo", "-a", "{alpn}", "-o", "{downloads}", "-n", "{server_host}", "{server_ip}", "{server_port}", "{paths}"]
//! server = ["/opt/picoquic/picoquicdemo", "-a", "{alpn}", "-w", "{www}", "-c", "{cert}", "-k", "{key}", "-p", "{listen_port}"]
//! cases = ["handshake", "transfer", "mp-handshake", "mp-transfer"]   # optional: default every case
//! alpn = "hq-interop"          # optional, for {alpn}
//! reports = false              # prints `interop:` summary lines (default false)
//! startup_ms = 500             # server start-up time when it prints no `interop: listening=` line
//! env = { PICOQUIC_LOG = "1" } # optional extra environment
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::cases::TestCase;
use crate::endpoint::Builtin;
use crate::env::Role;
use crate::error::InteropError;

/// One implementation.
#[derive(Debug, Clone)]
pub struct Implementation {
    /// Its name in the matrix.
    pub name: String,
    /// Client command line template.
    pub client: Vec<String>,
    /// Server command line template.
    pub server: Vec<String>,
    /// Test cases it takes part in (`None`: every one; it may still exit 127).
    pub cases: Option<Vec<TestCase>>,
    /// For built-ins: the finer per-role support.
    pub builtin: Option<Builtin>,
    /// ALPN, for the `{alpn}` placeholder.
    pub alpn: String,
    /// Prints `interop:` summary lines.
    pub reports: bool,
    /// Start-up time of a server that prints no `interop: listening=` line, in milliseconds.
    pub startup_ms: u64,
    /// Extra environment.
    pub env: BTreeMap<String, String>,
}

impl Implementation {
    /// A built-in, run as `<exe> endpoint <name>`.
    pub fn builtin(b: Builtin, exe: &Path) -> Implementation {
        let cmd = vec![
            exe.display().to_string(),
            "endpoint".to_owned(),
            b.name().to_owned(),
        ];
        Implementation {
            name: b.name().to_owned(),
            client: cmd.clone(),
            server: cmd,
            cases: None,
            builtin: Some(b),
            alpn: "hq-interop".to_owned(),
            reports: true,
            startup_ms: 500,
            env: BTreeMap::new(),
        }
    }

    /// Whether it takes part in `case` in `role`.
    pub fn supports(&self, role: Role, case: TestCase) -> bool {
        if let Some(b) = self.builtin {
            return b.supports(role, case);
        }
        self.cases.as_ref().is_none_or(|c| c.contains(&case))
    }

    /// The command line template of `role`.
    pub fn command(&self, role: Role) -> &[String] {
        match role {
            Role::Client => &self.client,
            Role::Server => &self.server,
        }
    }
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct FileImpl {
    name: String,
    client: Vec<String>,
    server: Vec<String>,
    cases: Option<Vec<String>>,
    #[serde(default = "default_alpn")]
    alpn: String,
    #[serde(default)]
    reports: bool,
    #[serde(default = "default_startup")]
    startup_ms: u64,
    #[serde(default)]
    env: BTreeMap<String, String>,
}

fn default_alpn() -> String {
    "hq-interop".to_owned()
}

fn default_startup() -> u64 {
    500
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    implementation: Vec<FileImpl>,
}

/// Parses a TOML implementations file.
pub fn parse(text: &str, path: &Path) -> Result<Vec<Implementation>, InteropError> {
    let err = |problem: String| InteropError::Config {
        path: path.to_path_buf(),
        problem,
    };
    let file: File = toml::from_str(text).map_err(|e| err(e.to_string()))?;
    file.implementation
        .into_iter()
        .map(|f| {
            if f.client.is_empty() || f.server.is_empty() {
                return Err(err(format!("{}: empty client or server command", f.name)));
            }
            let cases = f
                .cases
                .map(|cs| cs.iter().map(|c| c.parse()).collect::<Result<Vec<TestCase>, _>>())
                .transpose()
                .map_err(|e| err(format!("{}: {e}", f.name)))?;
            Ok(Implementation {
                name: f.name,
                client: f.client,
                server: f.server,
                cases,
                builtin: None,
                alpn: f.alpn,
                reports: f.reports,
                startup_ms: f.startup_ms,
                env: f.env,
            })
        })
        .collect()
}

/// The built-ins plus those of `file`, if any (a file entry with a built-in's name replaces it).
pub fn load(exe: &Path, file: Option<&PathBuf>) -> Result<Vec<Implementation>, InteropError> {
    let mut all: Vec<Implementation> = Builtin::ALL
        .iter()
        .map(|b| Implementation::builtin(*b, exe))
        .collect();
    if let Some(path) = file {
        let text = std::fs::read_to_string(path)
            .map_err(|e| InteropError::io(format!("reading {}", path.display()), e))?;
        for imp in parse(&text, path)? {
            all.retain(|i| i.name != imp.name);
            all.push(imp);
        }
    }
    Ok(all)
}

/// Fills `{name}` placeholders of a template.
pub fn expand(template: &[String], vars: &BTreeMap<&str, String>) -> Vec<String> {
    template
        .iter()
        .map(|arg| {
            let mut out = arg.clone();
            for (k, v) in vars {
                out = out.replace(&format!("{{{k}}}"), v);
            }
            out
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_file_parses() {
        let text = r#"
            [[implementation]]
            name = "ext"
            client = ["/bin/ext", "{downloads}"]
            server = ["/bin/ext", "-p", "{listen_port}"]
            cases = ["handshake", "mp-transfer"]
            env = { A = "b" }
        "#;
        let imps = parse(text, Path::new("x.toml")).unwrap();
        assert_eq!(imps.len(), 1);
        let i = &imps[0];
        assert!(i.supports(Role::Client, TestCase::MpTransfer));
        assert!(!i.supports(Role::Server, TestCase::Retry));
        assert_eq!(i.env.get("A").map(String::as_str), Some("b"));
        assert!(!i.reports);
        let vars = BTreeMap::from([("listen_port", "4433".to_owned())]);
        assert_eq!(expand(&i.server, &vars), vec!["/bin/ext", "-p", "4433"]);
        assert!(
            parse(
                "[[implementation]]\nname=\"x\"\nclient=[]\nserver=[\"a\"]",
                Path::new("x")
            )
            .is_err()
        );
        assert!(
            parse(
                "[[implementation]]\nname=\"x\"\nclient=[\"a\"]\nserver=[\"a\"]\ncases=[\"nope\"]",
                Path::new("x")
            )
            .is_err()
        );
    }
}
