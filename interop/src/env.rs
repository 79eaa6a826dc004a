//! The endpoint's environment: the quic-interop-runner variables plus the extras a loopback setting needs.
//!
//! | Variable | Role | Meaning |
//! |---|---|---|
//! | `ROLE` | both | `client` or `server` |
//! | `TESTCASE` | both | a [`crate::TestCase`] name; unknown or unsupported: exit 127 |
//! | `REQUESTS` | client | space-separated `https://host:port/file` URLs |
//! | `DOWNLOADS` | client | where the client writes each file (default `/downloads`) |
//! | `WWW` | server | the files the server serves (default `/www`) |
//! | `CERTS` | both | directory with `cert.pem` and `priv.key` (default `/certs`); the client trusts `cert.pem` when it is there |
//! | `QLOGDIR` | both | optional: qlog output directory (mpquic writes one; noq and quinn ignore it) |
//! | `SSLKEYLOGFILE` | both | optional: TLS key log |
//! | `SERVER_ADDR` | client | extra: the address to send to (default: the first URL's host and port) |
//! | `LISTEN_ADDR` | server | extra: the address to listen on (default `0.0.0.0:443`) |
//! | `CLIENT_PATHS` | client | extra, multipath cases: space-separated `LOCAL_IP[@REMOTE_ADDR]`, one per extra path (default remote: the server address) |

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::path::PathBuf;

use crate::cases::TestCase;
use crate::error::InteropError;

/// Client or server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Downloads the files.
    Client,
    /// Serves the files.
    Server,
}

impl Role {
    /// `client` or `server`.
    pub fn name(self) -> &'static str {
        match self {
            Role::Client => "client",
            Role::Server => "server",
        }
    }
}

/// One requested file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The URL as given.
    pub url: String,
    /// Host part (the TLS server name).
    pub host: String,
    /// Port (443 when absent).
    pub port: u16,
    /// Path, starting with `/`.
    pub path: String,
}

/// An extra path the client opens (multipath cases).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExtraPath {
    /// The client's local address for the path (port 0: the endpoint's port).
    pub local: IpAddr,
    /// The remote address (`None`: the server address of path 0).
    pub remote: Option<SocketAddr>,
}

/// Everything an endpoint reads from its environment.
#[derive(Debug, Clone)]
pub struct EndpointEnv {
    /// Client or server.
    pub role: Role,
    /// The raw `TESTCASE` value.
    pub testcase: String,
    /// Client: the files to fetch.
    pub requests: Vec<Request>,
    /// Client: where to write them.
    pub downloads: PathBuf,
    /// Server: what to serve.
    pub www: PathBuf,
    /// Certificate directory.
    pub certs: PathBuf,
    /// qlog directory, if any.
    pub qlogdir: Option<PathBuf>,
    /// Whether `SSLKEYLOGFILE` is set.
    pub keylog: bool,
    /// Client: where to send.
    pub server_addr: Option<SocketAddr>,
    /// Server: where to listen.
    pub listen_addr: SocketAddr,
    /// Client: extra paths.
    pub client_paths: Vec<ExtraPath>,
    /// mpquic only: congestion controller spec (`MPQUIC_CC`, e.g. `bbr`; default: the library's).
    pub mpquic_cc: Option<String>,
    /// mpquic only: scheduler spec (`MPQUIC_SCHEDULER`, e.g. `roundrobin`; default: the library's).
    pub mpquic_scheduler: Option<String>,
    /// mpquic only: opportunistic retransmission on or off (`MPQUIC_REINJECTION=on|off`; default: the
    /// library's).
    pub mpquic_reinjection: Option<bool>,
    /// mpquic only: path MTU discovery on or off (`MPQUIC_PMTUD=on|off`; default: the library's).
    pub mpquic_pmtud: Option<bool>,
}

/// An `on`/`off` variable.
fn on_off(name: &'static str) -> Result<Option<bool>, InteropError> {
    match var(name).as_deref() {
        None => Ok(None),
        Some("on") => Ok(Some(true)),
        Some("off") => Ok(Some(false)),
        Some(other) => Err(InteropError::Env {
            name,
            problem: format!("{other:?}: want on or off"),
        }),
    }
}

fn var(name: &'static str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// Parses `https://host[:port]/path`.
pub fn parse_request(url: &str) -> Result<Request, InteropError> {
    let bad = |problem: &str| InteropError::Env {
        name: "REQUESTS",
        problem: format!("{url:?}: {problem}"),
    };
    let rest = url
        .strip_prefix("https://")
        .ok_or_else(|| bad("not an https:// URL"))?;
    let (authority, path) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, "/"),
    };
    let (host, port) = if let Some(inner) = authority.strip_prefix('[') {
        // [v6]:port
        let (h, after) = inner.split_once(']').ok_or_else(|| bad("unclosed ["))?;
        let port = match after.strip_prefix(':') {
            Some(p) => p.parse().map_err(|_| bad("bad port"))?,
            None => 443,
        };
        (h.to_owned(), port)
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h.to_owned(), p.parse().map_err(|_| bad("bad port"))?),
            None => (authority.to_owned(), 443),
        }
    };
    if host.is_empty() {
        return Err(bad("no host"));
    }
    Ok(Request {
        url: url.to_owned(),
        host,
        port,
        path: path.to_owned(),
    })
}

/// Parses one `CLIENT_PATHS` entry: `LOCAL_IP[@REMOTE_ADDR]`.
pub fn parse_extra_path(s: &str) -> Result<ExtraPath, InteropError> {
    let bad = |problem: &str| InteropError::Env {
        name: "CLIENT_PATHS",
        problem: format!("{s:?}: {problem}"),
    };
    let (local, remote) = match s.split_once('@') {
        Some((l, r)) => (
            l,
            Some(r.parse::<SocketAddr>().map_err(|_| bad("bad remote address"))?),
        ),
        None => (s, None),
    };
    Ok(ExtraPath {
        local: local.parse().map_err(|_| bad("bad local IP"))?,
        remote,
    })
}

impl EndpointEnv {
    /// Reads the process environment.
    pub fn from_env() -> Result<EndpointEnv, InteropError> {
        let role = match var("ROLE").as_deref() {
            Some("client") => Role::Client,
            Some("server") => Role::Server,
            other => {
                return Err(InteropError::Env {
                    name: "ROLE",
                    problem: format!("{other:?}: want client or server"),
                });
            }
        };
        let requests = var("REQUESTS")
            .unwrap_or_default()
            .split_whitespace()
            .map(parse_request)
            .collect::<Result<Vec<_>, _>>()?;
        let server_addr = var("SERVER_ADDR")
            .map(|s| {
                s.parse().map_err(|_| InteropError::Env {
                    name: "SERVER_ADDR",
                    problem: format!("{s:?}: not an address"),
                })
            })
            .transpose()?;
        let listen_addr = match var("LISTEN_ADDR") {
            Some(s) => s.parse().map_err(|_| InteropError::Env {
                name: "LISTEN_ADDR",
                problem: format!("{s:?}: not an address"),
            })?,
            None => SocketAddr::from(([0, 0, 0, 0], 443)),
        };
        let client_paths = var("CLIENT_PATHS")
            .unwrap_or_default()
            .split_whitespace()
            .map(parse_extra_path)
            .collect::<Result<Vec<_>, _>>()?;
        let mpquic_cc = var("MPQUIC_CC");
        if let Some(spec) = &mpquic_cc {
            mpquic::cc::registry::build(spec).map_err(|e| InteropError::Env {
                name: "MPQUIC_CC",
                problem: format!("{spec:?}: {e}"),
            })?;
        }
        let mpquic_scheduler = var("MPQUIC_SCHEDULER");
        if let Some(spec) = &mpquic_scheduler {
            mpquic::sched::registry::build(spec).map_err(|e| InteropError::Env {
                name: "MPQUIC_SCHEDULER",
                problem: format!("{spec:?}: {e}"),
            })?;
        }
        Ok(EndpointEnv {
            mpquic_cc,
            mpquic_scheduler,
            mpquic_reinjection: on_off("MPQUIC_REINJECTION")?,
            mpquic_pmtud: on_off("MPQUIC_PMTUD")?,
            role,
            testcase: var("TESTCASE").unwrap_or_default(),
            requests,
            downloads: var("DOWNLOADS").unwrap_or_else(|| "/downloads".to_owned()).into(),
            www: var("WWW").unwrap_or_else(|| "/www".to_owned()).into(),
            certs: var("CERTS").unwrap_or_else(|| "/certs".to_owned()).into(),
            qlogdir: var("QLOGDIR").map(PathBuf::from),
            keylog: var("SSLKEYLOGFILE").is_some(),
            server_addr,
            listen_addr,
            client_paths,
        })
    }

    /// The test case, if known.
    pub fn case(&self) -> Option<TestCase> {
        self.testcase.parse().ok()
    }

    /// Client: the address to connect to and the TLS server name.
    pub fn server(&self) -> Result<(SocketAddr, String), InteropError> {
        let first = self.requests.first().ok_or(InteropError::Env {
            name: "REQUESTS",
            problem: "no request".to_owned(),
        })?;
        let addr = match self.server_addr {
            Some(a) => a,
            None => (first.host.as_str(), first.port)
                .to_socket_addrs()
                .map_err(|e| InteropError::io(format!("resolving {}", first.host), e))?
                .next()
                .ok_or_else(|| InteropError::Env {
                    name: "REQUESTS",
                    problem: format!("{} does not resolve", first.host),
                })?,
        };
        Ok((addr, first.host.clone()))
    }

    /// The certificate file (`$CERTS/cert.pem`).
    pub fn cert_file(&self) -> PathBuf {
        self.certs.join("cert.pem")
    }

    /// The private key file (`$CERTS/priv.key`).
    pub fn key_file(&self) -> PathBuf {
        self.certs.join("priv.key")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_parse() {
        let r = parse_request("https://localhost:4433/a/b.bin").unwrap();
        assert_eq!(
            (r.host.as_str(), r.port, r.path.as_str()),
            ("localhost", 4433, "/a/b.bin")
        );
        let r = parse_request("https://server/x").unwrap();
        assert_eq!((r.host.as_str(), r.port), ("server", 443));
        let r = parse_request("https://[::1]:1/x").unwrap();
        assert_eq!((r.host.as_str(), r.port), ("::1", 1));
        assert!(parse_request("http://a/b").is_err());
        assert!(parse_request("https://a:port/b").is_err());
    }

    #[test]
    fn extra_paths_parse() {
        let p = parse_extra_path("127.0.0.2").unwrap();
        assert_eq!(p.remote, None);
        let p = parse_extra_path("127.0.0.2@127.0.0.1:9").unwrap();
        assert_eq!(p.remote, Some("127.0.0.1:9".parse().unwrap()));
        assert!(parse_extra_path("x@y").is_err());
    }
}
