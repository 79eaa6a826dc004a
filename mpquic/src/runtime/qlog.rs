//! qlog files: [`qlog_directory`] builds the [`QlogFactory`] that writes each connection's qlog to
//! `DIR/<odcid>_<side>.sqlog`. The file I/O lives here, in the runtime; the core only formats records.

use std::io::Write;
use std::path::PathBuf;

pub use crate::proto::qlog::{QlogContext, QlogFactory};

/// A factory writing the qlog of every connection into `dir` (created if missing), one file per connection
/// and side, named `<odcid>_<side>.sqlog` ([`QlogContext::file_name`]). Set it as
/// [`TransportConfig::qlog`](crate::proto::connection::TransportConfig::qlog). A file that cannot be created
/// is logged (tracing) and that connection runs without qlog.
pub fn qlog_directory(dir: impl Into<PathBuf>) -> QlogFactory {
    let dir = dir.into();
    QlogFactory::new(move |ctx| {
        let path = dir.join(ctx.file_name());
        let file = std::fs::create_dir_all(&dir).and_then(|()| std::fs::File::create(&path));
        match file {
            Ok(f) => Some(Box::new(f) as Box<dyn Write + Send>),
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "qlog: cannot create the file");
                None
            }
        }
    })
}
