//! The behaviour checks of each test case, over both endpoints' `interop:` reports and the network's counters
//! (files are checked by hash before these run). A check that needs a fact neither endpoint printed fails with
//! "not observed", except where the README says the other side's observation is enough.

use super::network::NetStats;
use crate::cases::TestCase;
use crate::report::Report;

/// Share of the server's bytes that path 1 must carry in mp-transfer (each path).
pub const MIN_PATH_SHARE: f64 = 0.10;
/// Largest share of the file the server may send on a backup path in mp-path-status.
pub const MAX_BACKUP_SHARE: f64 = 0.03;

/// Both sides' reports.
pub struct Seen<'a> {
    /// The client's.
    pub client: &'a Report,
    /// The server's.
    pub server: &'a Report,
    /// The network's counters.
    pub net: &'a NetStats,
    /// Total size of the files.
    pub total: u64,
}

fn either_flag(s: &Seen<'_>, key: &str) -> Option<bool> {
    match (s.client.flag(key), s.server.flag(key)) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(false) || b.unwrap_or(false)),
    }
}

/// Runs the checks of `case`; `Err` explains the first failure.
pub fn check(case: TestCase, s: &Seen<'_>) -> Result<(), String> {
    match case {
        TestCase::Handshake | TestCase::Transfer => Ok(()),
        TestCase::ChaCha20 => {
            for (who, r) in [("client", s.client), ("server", s.server)] {
                if let Some(c) = r.get("cipher")
                    && c != "TLS_CHACHA20_POLY1305_SHA256"
                {
                    return Err(format!("{who} negotiated {c}"));
                }
            }
            Ok(())
        }
        TestCase::Retry => match either_flag(s, "retry") {
            Some(true) => Ok(()),
            Some(false) => Err("no Retry seen by either side".to_owned()),
            None => Err("Retry not observed (neither side reports it)".to_owned()),
        },
        TestCase::KeyUpdate => {
            let n = [s.client.number("key_updates"), s.server.number("key_updates")];
            match n.iter().flatten().max() {
                Some(&k) if k >= 1 => Ok(()),
                Some(_) => Err("no key update seen".to_owned()),
                None => Err("key update not observed (neither side reports key_updates)".to_owned()),
            }
        }
        TestCase::TransferLoss => {
            if s.net.dropped_loss.iter().sum::<u64>() == 0 {
                return Err("the emulator dropped nothing".to_owned());
            }
            Ok(())
        }
        TestCase::Blackhole => {
            if s.net.actions_done < 2 || s.net.dropped_down.iter().sum::<u64>() == 0 {
                return Err(format!(
                    "outages done {} of 2, {} datagrams dropped while down",
                    s.net.actions_done,
                    s.net.dropped_down.iter().sum::<u64>()
                ));
            }
            Ok(())
        }
        TestCase::RebindPort => {
            if s.net.rebinds < 2 {
                return Err(format!("only {} rebinds happened mid-transfer", s.net.rebinds));
            }
            if s.net.down_since_rebind == 0 {
                return Err("the server never answered the new port".to_owned());
            }
            Ok(())
        }
        TestCase::MpHandshake => {
            for (who, r) in [("client", s.client), ("server", s.server)] {
                if r.flag("multipath") == Some(false) {
                    return Err(format!("{who}: multipath not negotiated"));
                }
            }
            if s.client.flag("multipath").is_none() && s.server.flag("multipath").is_none() {
                return Err("multipath not observed (neither side reports it)".to_owned());
            }
            Ok(())
        }
        TestCase::MpTransfer => {
            let (r, who) = if s.server.paths.is_empty() {
                (s.client, "client received")
            } else {
                (s.server, "server sent")
            };
            let key = if who == "server sent" { "sent" } else { "received" };
            let p0 = r.path_number(0, key).unwrap_or(0);
            let p1 = r.path_number(1, key).unwrap_or(0);
            let total = (p0 + p1).max(1) as f64;
            if (p0 as f64) < total * MIN_PATH_SHARE || (p1 as f64) < total * MIN_PATH_SHARE {
                return Err(format!(
                    "{who} {p0} B on path 0 and {p1} B on path 1 (each should be ≥ {:.0} %)",
                    MIN_PATH_SHARE * 100.0
                ));
            }
            Ok(())
        }
        TestCase::MpPathAbandon | TestCase::MpPathAbandonServer => {
            let mut observed = false;
            for (who, r) in [("client", s.client), ("server", s.server)] {
                match r.path_flag(1, "abandoned") {
                    Some(true) => observed = true,
                    Some(false) => return Err(format!("{who}: path 1 not abandoned")),
                    None if !r.is_empty() => return Err(format!("{who}: path 1 never seen")),
                    None => {}
                }
            }
            if !observed {
                return Err("abandon not observed (neither side reports paths)".to_owned());
            }
            Ok(())
        }
        TestCase::MpPathStatus => {
            if s.server.paths.is_empty() {
                return Err("server's per-path bytes not observed".to_owned());
            }
            let p1 = s.server.path_number(1, "sent");
            let Some(p1) = p1 else {
                return Err("server never saw path 1".to_owned());
            };
            if p1 as f64 > s.total as f64 * MAX_BACKUP_SHARE {
                return Err(format!(
                    "server sent {p1} B on backup path 1 ({:.1} % of {} B)",
                    p1 as f64 * 100.0 / s.total as f64,
                    s.total
                ));
            }
            if s.server.flag("peer_backup") == Some(false) {
                return Err("server never received PATH_STATUS_BACKUP".to_owned());
            }
            Ok(())
        }
        TestCase::MpFailover => {
            let before = s.net.forwarded_before_action.get(1).copied().unwrap_or(0);
            let dropped = s.net.dropped_down.get(1).copied().unwrap_or(0);
            if s.net.actions_done < 1 {
                return Err("the transfer ended before path 1 could be blackholed".to_owned());
            }
            if before == 0 {
                return Err("path 1 carried nothing before the blackhole".to_owned());
            }
            if dropped == 0 {
                return Err("nothing was sent into the blackholed path 1".to_owned());
            }
            Ok(())
        }
        TestCase::MpCidRotation => {
            match s.client.number("cid_rotations") {
                Some(n) if n >= 2 => {}
                Some(n) => return Err(format!("client rotated connection IDs only {n} times")),
                None => return Err("rotation not observed (client reports no cid_rotations)".to_owned()),
            }
            if let Some(r) = s.server.number("retired_cids")
                && r < 2
            {
                return Err(format!("server received only {r} RETIRE_CONNECTION_ID frames"));
            }
            Ok(())
        }
    }
}
