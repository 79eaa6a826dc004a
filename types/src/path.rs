//! Path identifiers and path status: what every controller event, scheduler view and connection frame
//! names a path by.

/// A path of a connection, as numbered by draft-ietf-quic-multipath-21 §3 (path 0 is the handshake path).
///
/// Every controller event and scheduler decision carries the path it concerns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PathId(pub u32);

impl std::fmt::Display for PathId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "path {}", self.0)
    }
}

impl From<u32> for PathId {
    fn from(v: u32) -> Self {
        PathId(v)
    }
}

/// The status a path was given with PATH_STATUS_AVAILABLE / PATH_STATUS_BACKUP
/// (draft-ietf-quic-multipath-21 §3.3), the QUIC counterpart of MPTCP's backup (`low_prio`) flag.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PathStatus {
    /// A normal path: schedulers use it.
    #[default]
    Available,
    /// A standby path: schedulers use it only when no available path is alive.
    Backup,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_id_displays_and_converts() {
        assert_eq!(PathId::from(7), PathId(7));
        assert_eq!(PathId(3).to_string(), "path 3");
        assert!(PathId(1) < PathId(2));
        assert_eq!(PathStatus::default(), PathStatus::Available);
    }
}
