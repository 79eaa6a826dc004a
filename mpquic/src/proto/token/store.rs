//! The client's store of NEW_TOKEN tokens (RFC 9000 §8.1.3), keyed by server name, and a bounded in-memory LRU
//! implementation.
//!
//! Rules the store keeps for the connection:
//! - only NEW_TOKEN tokens go in (RFC 9000 §8.1.3: "The client MUST NOT use the token provided in a Retry for
//!   future connections.");
//! - a token is handed out once: [`TokenStore::take`] removes it (RFC 9000 §8.1.3: "A client SHOULD NOT reuse a
//!   token from a NEW_TOKEN frame for different connection attempts.");
//! - tokens are kept per server name and handed out only for that name (RFC 9000 §8.1.3: "A client MUST NOT
//!   include a token that is not applicable to the server that it is connecting to");
//! - a duplicate is ignored (RFC 9000 §19.7: "Clients are responsible for discarding duplicate values, which
//!   might be used to link connection attempts").
//!
//! [`LruTokenStore`] bounds everything a server controls: the number of server names, the tokens per name and
//! the size of each token. Eviction scans the names (O(names)); the bound keeps that small.

use std::collections::{HashMap, VecDeque};

use bytes::Bytes;

/// Where a client keeps NEW_TOKEN tokens between connections. The runtime shares one store between the
/// connections of an endpoint (behind a lock).
pub trait TokenStore: Send {
    /// Records a token received in a NEW_TOKEN frame from `server_name`.
    fn insert(&mut self, server_name: &str, token: Bytes);
    /// Removes and returns a token for a new connection to `server_name`, the newest first.
    fn take(&mut self, server_name: &str) -> Option<Bytes>;
}

/// A bounded in-memory [`TokenStore`] that forgets the least recently used server name first.
#[derive(Debug)]
pub struct LruTokenStore {
    max_servers: usize,
    max_tokens_per_server: usize,
    max_token_len: usize,
    clock: u64,
    entries: HashMap<String, Entry>,
}

#[derive(Debug)]
struct Entry {
    last_used: u64,
    tokens: VecDeque<Bytes>,
}

impl LruTokenStore {
    /// Default number of server names kept.
    pub const DEFAULT_MAX_SERVERS: usize = 256;
    /// Default number of tokens kept per server name.
    pub const DEFAULT_MAX_TOKENS_PER_SERVER: usize = 2;
    /// Default size limit of a stored token: larger ones are dropped (they would crowd the Initial packet).
    pub const DEFAULT_MAX_TOKEN_LEN: usize = 512;

    /// A store of at most `max_servers` names, `max_tokens_per_server` tokens each (the oldest goes first), and
    /// tokens of at most `max_token_len` bytes. Zero limits make a store that keeps nothing.
    pub fn new(max_servers: usize, max_tokens_per_server: usize, max_token_len: usize) -> Self {
        LruTokenStore {
            max_servers,
            max_tokens_per_server,
            max_token_len,
            clock: 0,
            entries: HashMap::new(),
        }
    }

    /// Number of server names with tokens.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no token is stored.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn tick(&mut self) -> u64 {
        self.clock = self.clock.wrapping_add(1);
        self.clock
    }

    fn evict_lru(&mut self) {
        let oldest = self
            .entries
            .iter()
            .min_by_key(|(_, e)| e.last_used)
            .map(|(name, _)| name.clone());
        if let Some(name) = oldest {
            self.entries.remove(&name);
        }
    }
}

impl Default for LruTokenStore {
    fn default() -> Self {
        Self::new(
            Self::DEFAULT_MAX_SERVERS,
            Self::DEFAULT_MAX_TOKENS_PER_SERVER,
            Self::DEFAULT_MAX_TOKEN_LEN,
        )
    }
}

impl TokenStore for LruTokenStore {
    fn insert(&mut self, server_name: &str, token: Bytes) {
        if token.is_empty()
            || token.len() > self.max_token_len
            || self.max_servers == 0
            || self.max_tokens_per_server == 0
        {
            return;
        }
        let now = self.tick();
        if let Some(entry) = self.entries.get_mut(server_name) {
            entry.last_used = now;
            if entry.tokens.contains(&token) {
                return;
            }
            while entry.tokens.len() >= self.max_tokens_per_server {
                entry.tokens.pop_front();
            }
            entry.tokens.push_back(token);
            return;
        }
        while self.entries.len() >= self.max_servers {
            self.evict_lru();
        }
        let mut tokens = VecDeque::with_capacity(self.max_tokens_per_server.min(4));
        tokens.push_back(token);
        self.entries.insert(
            server_name.to_owned(),
            Entry {
                last_used: now,
                tokens,
            },
        );
    }

    fn take(&mut self, server_name: &str) -> Option<Bytes> {
        let now = self.tick();
        let entry = self.entries.get_mut(server_name)?;
        entry.last_used = now;
        let token = entry.tokens.pop_back();
        if entry.tokens.is_empty() {
            self.entries.remove(server_name);
        }
        token
    }
}
