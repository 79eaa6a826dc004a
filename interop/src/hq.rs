//! HTTP/0.9 over QUIC (ALPN `hq-interop`), as quic-interop-runner endpoints speak it: the client opens a
//! bidirectional stream per file, sends `GET /path\r\n` and ends its side; the server answers with the file's
//! bytes and ends the stream. Written once over tokio's `AsyncRead`/`AsyncWrite`, so every stack shares it.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::error::InteropError;

/// The ALPN protocol.
pub const ALPN: &[u8] = b"hq-interop";
/// The longest request line accepted.
const MAX_REQUEST: usize = 4096;
/// Read and write chunk size.
const CHUNK: usize = 64 * 1024;

fn request_error(path: &str, problem: impl std::fmt::Display) -> InteropError {
    InteropError::Request {
        path: path.to_owned(),
        problem: problem.to_string(),
    }
}

/// Client: requests `path` on a fresh stream and writes the response to `out`, adding every byte received to
/// `progress` as it arrives. Returns the response's length.
pub async fn fetch<W, R>(
    mut send: W,
    mut recv: R,
    path: &str,
    out: &Path,
    progress: &AtomicU64,
) -> Result<u64, InteropError>
where
    W: AsyncWrite + Unpin,
    R: AsyncRead + Unpin,
{
    send.write_all(format!("GET {path}\r\n").as_bytes())
        .await
        .map_err(|e| request_error(path, e))?;
    send.shutdown().await.map_err(|e| request_error(path, e))?;
    let mut file = tokio::fs::File::create(out)
        .await
        .map_err(|e| InteropError::io(format!("creating {}", out.display()), e))?;
    let mut buf = vec![0u8; CHUNK];
    let mut total = 0u64;
    loop {
        let n = recv.read(&mut buf).await.map_err(|e| request_error(path, e))?;
        let Some(chunk) = buf.get(..n) else {
            return Err(request_error(path, "read past the buffer"));
        };
        if n == 0 {
            break;
        }
        file.write_all(chunk)
            .await
            .map_err(|e| InteropError::io(format!("writing {}", out.display()), e))?;
        total += n as u64;
        progress.fetch_add(n as u64, Ordering::Relaxed);
    }
    file.flush()
        .await
        .map_err(|e| InteropError::io(format!("writing {}", out.display()), e))?;
    Ok(total)
}

/// The file a request path names under `root`; `None` if it would leave `root` or names nothing.
pub fn resolve(root: &Path, path: &str) -> Option<PathBuf> {
    let mut out = root.to_path_buf();
    let mut any = false;
    for c in Path::new(path.trim_start_matches('/')).components() {
        match c {
            Component::Normal(p) => {
                out.push(p);
                any = true;
            }
            Component::CurDir => {}
            _ => return None,
        }
    }
    any.then_some(out)
}

/// Parses a request line (`GET /path`, CRLF optional).
pub fn parse_request_line(line: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(line).ok()?;
    let text = text.trim_end_matches(['\r', '\n']);
    let path = text.strip_prefix("GET ")?.trim();
    path.starts_with('/').then(|| path.to_owned())
}

/// Server: reads one request from `recv` and answers on `send` with the file from `www`, adding every byte
/// written to `progress`. Returns the requested path and the bytes sent.
pub async fn serve<W, R>(
    mut send: W,
    mut recv: R,
    www: &Path,
    progress: Arc<AtomicU64>,
) -> Result<(String, u64), InteropError>
where
    W: AsyncWrite + Unpin,
    R: AsyncRead + Unpin,
{
    let mut line = Vec::new();
    let mut buf = [0u8; 512];
    loop {
        let n = recv.read(&mut buf).await.map_err(|e| request_error("?", e))?;
        if n == 0 {
            break;
        }
        line.extend_from_slice(buf.get(..n).unwrap_or_default());
        if line.len() > MAX_REQUEST {
            return Err(request_error("?", "request line too long"));
        }
    }
    let path = parse_request_line(&line).ok_or_else(|| request_error("?", "not a GET request"))?;
    let file = resolve(www, &path).ok_or_else(|| request_error(&path, "outside the www directory"))?;
    let mut f = tokio::fs::File::open(&file)
        .await
        .map_err(|e| InteropError::io(format!("opening {}", file.display()), e))?;
    let mut chunk = vec![0u8; CHUNK];
    let mut total = 0u64;
    loop {
        let n = f
            .read(&mut chunk)
            .await
            .map_err(|e| InteropError::io(format!("reading {}", file.display()), e))?;
        if n == 0 {
            break;
        }
        send.write_all(chunk.get(..n).unwrap_or_default())
            .await
            .map_err(|e| request_error(&path, e))?;
        total += n as u64;
        progress.fetch_add(n as u64, Ordering::Relaxed);
    }
    send.shutdown().await.map_err(|e| request_error(&path, e))?;
    Ok((path, total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_lines() {
        assert_eq!(parse_request_line(b"GET /a.bin\r\n").as_deref(), Some("/a.bin"));
        assert_eq!(parse_request_line(b"GET /a").as_deref(), Some("/a"));
        assert_eq!(parse_request_line(b"POST /a\r\n"), None);
        assert_eq!(parse_request_line(b"GET a\r\n"), None);
    }

    #[test]
    fn paths_stay_inside_www() {
        let root = Path::new("/www");
        assert_eq!(resolve(root, "/x/y"), Some(PathBuf::from("/www/x/y")));
        assert_eq!(resolve(root, "/../etc/passwd"), None);
        assert_eq!(resolve(root, "/"), None);
    }

    #[tokio::test]
    async fn fetch_and_serve_over_a_pipe() {
        let dir = std::env::temp_dir().join(format!("mpquic-interop-hq-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(dir.join("f"), &data).unwrap();
        let (c2s_r, c2s_w) = tokio::io::simplex(1024);
        let (s2c_r, s2c_w) = tokio::io::simplex(1024);
        let www = dir.clone();
        let sent = Arc::new(AtomicU64::new(0));
        let got = AtomicU64::new(0);
        let out = dir.join("out");
        let (served, fetched) = tokio::join!(
            serve(s2c_w, c2s_r, &www, sent.clone()),
            fetch(c2s_w, s2c_r, "/f", &out, &got)
        );
        assert_eq!(fetched.unwrap(), data.len() as u64);
        assert_eq!(served.unwrap(), ("/f".to_owned(), data.len() as u64));
        assert_eq!(std::fs::read(&out).unwrap(), data);
        assert_eq!(got.load(Ordering::Relaxed), data.len() as u64);
        assert_eq!(sent.load(Ordering::Relaxed), data.len() as u64);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
