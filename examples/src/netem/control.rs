//! Changing paths while the emulator runs: the schedule of up/down events, and the UDP control port.
//!
//! The control port takes text commands, one per line (several lines per datagram are fine), and answers
//! each datagram with one reply datagram to its sender:
//!
//! | command | effect | reply |
//! |---|---|---|
//! | `down PATH` / `down all` | take a path (both directions) down | `ok` |
//! | `up PATH` / `up all` | bring it back up | `ok` |
//! | `toggle PATH` | flip its state | `ok` |
//! | `stats` | nothing | the counters as JSON |
//!
//! Paths are numbered from 0. A bad command gets `error: …` naming the valid ones. From a shell:
//! `echo "down 1" | nc -u -w1 127.0.0.1 5999`.

use mpquic_netsim::time::SimTime;
use tokio::net::UdpSocket;

use super::config::{PathSelector, ScheduledEvent};
use super::emulator::Controller;
use super::relay::MAX_DATAGRAM;

/// A control-port command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// Bring paths up (`true`) or down (`false`).
    SetUp(PathSelector, bool),
    /// Flip a path's state.
    Toggle(usize),
    /// Report the counters.
    Stats,
}

/// What the control port accepts.
pub const COMMANDS_EXPECTED: &str = "one of: up PATH|all, down PATH|all, toggle PATH, stats (paths from 0)";

/// Parses one command line (see the module documentation).
pub fn parse_command(line: &str) -> Result<Command, String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let path = |word: &str| {
        word.parse::<usize>()
            .map_err(|_| format!("bad path {word:?}: {COMMANDS_EXPECTED}"))
    };
    let selector = |word: &str| {
        if word.eq_ignore_ascii_case("all") {
            Ok(PathSelector::All)
        } else {
            path(word).map(PathSelector::One)
        }
    };
    match words.as_slice() {
        ["up", p] => Ok(Command::SetUp(selector(p)?, true)),
        ["down", p] => Ok(Command::SetUp(selector(p)?, false)),
        ["toggle", p] => Ok(Command::Toggle(path(p)?)),
        ["stats"] => Ok(Command::Stats),
        _ => Err(format!("unknown command {:?}: {COMMANDS_EXPECTED}", line.trim())),
    }
}

/// Runs one command; returns the reply.
pub fn execute(controller: &Controller, command: Command) -> String {
    let result = match command {
        Command::SetUp(paths, up) => controller.set_up_selected(paths, up),
        Command::Toggle(path) => controller.is_up(path).and_then(|up| controller.set_up(path, !up)),
        Command::Stats => {
            return serde_json::to_string(&controller.stats())
                .unwrap_or_else(|e| format!("error: cannot encode counters: {e}"));
        }
    };
    match result {
        Ok(()) => "ok".to_owned(),
        Err(e) => format!("error: {e}"),
    }
}

/// Serves the control port until the task is stopped.
pub(crate) async fn serve(controller: Controller, socket: UdpSocket) {
    let mut buf = vec![0u8; MAX_DATAGRAM];
    loop {
        let (len, from) = match socket.recv_from(&mut buf).await {
            Ok(r) => r,
            Err(e) => {
                tracing::debug!(error = %e, "control port receive failed");
                continue;
            }
        };
        let text = String::from_utf8_lossy(buf.get(..len).unwrap_or_default()).into_owned();
        let mut replies = Vec::new();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let reply = match parse_command(line) {
                Ok(command) => {
                    tracing::info!(command = line.trim(), %from, "control command");
                    execute(&controller, command)
                }
                Err(e) => format!("error: {e}"),
            };
            replies.push(reply);
        }
        if replies.is_empty() {
            replies.push(format!("error: empty command: {COMMANDS_EXPECTED}"));
        }
        let mut reply = replies.join("\n");
        reply.push('\n');
        if let Err(e) = socket.send_to(reply.as_bytes(), from).await {
            tracing::debug!(error = %e, %from, "control port reply failed");
        }
    }
}

/// Applies `events` at their times (in time order; events at the same time in the order given).
pub(crate) async fn run_schedule(controller: Controller, mut events: Vec<ScheduledEvent>) {
    events.sort_by_key(|e| e.at);
    let clock = controller.clock();
    for event in events {
        tokio::time::sleep_until(clock.instant(SimTime::from_duration(event.at))).await;
        tracing::info!(path = %event.path, up = event.up, at = ?event.at, "scheduled event");
        if let Err(e) = controller.set_up_selected(event.path, event.up) {
            tracing::warn!(error = %e, "scheduled event failed");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands() {
        assert_eq!(
            parse_command("down 1"),
            Ok(Command::SetUp(PathSelector::One(1), false))
        );
        assert_eq!(
            parse_command(" up all "),
            Ok(Command::SetUp(PathSelector::All, true))
        );
        assert_eq!(parse_command("toggle 0"), Ok(Command::Toggle(0)));
        assert_eq!(parse_command("stats"), Ok(Command::Stats));
        for bad in ["down", "down x", "reboot 1", "toggle all", ""] {
            let e = parse_command(bad).unwrap_err();
            assert!(e.contains("up PATH|all"), "{bad}: {e}");
        }
    }
}
