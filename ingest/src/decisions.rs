//! Decisions recorded apart from the calls they decide — Claude Code's OpenTelemetry
//! `tool_decision` events, read by the annotating sources ([`crate::registry::annotates`]) —
//! kept beside the table in `decisions.json` and joined onto the rows of the same calls.
//!
//! Owns: the store (each annotating source remembered as the manifest remembers a transcript —
//! size, time and content digest, so an unchanged file is not read again — with the decisions
//! it holds), which calls' decisions changed, and the join. A decision is joined onto the row
//! whose event id is its call's (Claude Code's `tool_use_id`, from which the id derives) when
//! the row names the same session; `decided_by` is filled only where the row's reader left it
//! empty. Either order of arrival gives the same table: a transcript read after its log finds
//! the decisions in the store; a log read after its transcript changes the decisions of calls
//! already in the table, and the run reads the sources owning those rows again. The calls whose
//! decisions changed are saved as `pending` before any row is rewritten and cleared once all
//! are, so a run that stops half-way is finished by the next.
//!
//! Must not: read a source (the run hands over what the annotating readers returned).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::common::BadCounts;
use crate::schema::{Event, agent};
use crate::table::{Manifest, SourceEntry, TableError, event_key, write_atomically};

/// The store's file in the table directory.
pub const FILE: &str = "decisions.json";

/// The store's format version.
const VERSION: u32 = 1;

/// One call's recorded decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Recorded {
    /// The call's event id (16 hex), derived from its `tool_use_id` as the rows' ids are.
    pub event_id: String,
    /// The session the log names.
    pub session_id: String,
    /// Claude Code's id of the call.
    pub tool_use_id: String,
    /// Who decided (one of `schema::decided_by`).
    pub decided_by: String,
    /// The log's own words (`accept/user_temporary`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<String>,
    /// Where it was read (`path:line`).
    pub at: String,
}

/// One annotating source: what it was when read, and its decisions.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredSource {
    /// As the manifest would remember it (no fragments, no events: it writes no rows).
    pub read: SourceEntry,
    /// Its decisions, one per call.
    pub decisions: Vec<Recorded>,
}

/// The decisions of every annotating source read into a table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Store {
    /// The format version.
    #[serde(default)]
    pub version: u32,
    /// By source path.
    #[serde(default)]
    pub sources: BTreeMap<String, StoredSource>,
    /// The event ids (16 hex) of calls whose decision changed while their rows may not show it
    /// yet.
    #[serde(default)]
    pub pending: BTreeSet<String>,
    /// The event ids (16 hex) of calls whose row in the table names another session than the
    /// log: not joined.
    #[serde(default)]
    pub other_session: BTreeSet<String>,
}

/// The decision joined onto one call's row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Joined {
    /// The session the log names.
    pub session_id: String,
    /// Claude Code's id of the call.
    pub tool_use_id: String,
    /// Who decided.
    pub decided_by: String,
}

/// Every call's decision, by event id: of two sources recording one call, the first by path.
pub type Index = HashMap<u64, Joined>;

/// The decisions of a table after a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DecisionCounts {
    /// Calls with a recorded decision.
    pub recorded: u64,
    /// Of those, calls whose row is in the table and names the same session: joined.
    pub joined: u64,
    /// Of those, calls whose row names another session than the log: not joined.
    pub other_session: u64,
    /// Of those, calls with no row in the table (their transcript not read, or gone).
    pub unmatched: u64,
}

impl Store {
    /// Loads the store of a table directory (empty when there is none yet).
    pub fn load(dir: &Path) -> Result<Store, TableError> {
        let path = dir.join(FILE);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Store::default()),
            Err(e) => {
                return Err(TableError(format!("cannot read `{}`: {e}", path.display())));
            }
        };
        serde_json::from_slice(&bytes)
            .map_err(|e| TableError(format!("cannot parse `{}`: {e}", path.display())))
    }

    /// Writes the store atomically, owner-only.
    pub fn save(&mut self, dir: &Path) -> Result<(), TableError> {
        self.version = VERSION;
        let bytes = serde_json::to_vec(self).map_err(|e| TableError(e.to_string()))?;
        write_atomically(&dir.join(FILE), &bytes)
    }

    /// The sources as a manifest, to tell which changed.
    pub fn manifest(&self) -> Manifest {
        Manifest {
            sources: self
                .sources
                .iter()
                .map(|(key, stored)| (key.clone(), stored.read.clone()))
                .collect(),
        }
    }

    /// Replaces a source's decisions with those its reader returned (annotations without a
    /// call id or a decider are not decisions).
    pub fn set(&mut self, key: String, read: SourceEntry, annotations: &[Event]) {
        let decisions = annotations
            .iter()
            .filter_map(|a| {
                Some(Recorded {
                    event_id: a.event_id.clone(),
                    session_id: a.session_id.clone(),
                    tool_use_id: a.tool_use_id.clone()?,
                    decided_by: a.decided_by.clone()?,
                    raw: a.denial_kind.clone(),
                    at: a.source.clone(),
                })
            })
            .collect();
        self.sources.insert(key, StoredSource { read, decisions });
    }

    /// Every call's decision.
    pub fn index(&self) -> Index {
        let mut index = Index::new();
        for stored in self.sources.values() {
            for d in &stored.decisions {
                index
                    .entry(event_key(&d.event_id))
                    .or_insert_with(|| Joined {
                        session_id: d.session_id.clone(),
                        tool_use_id: d.tool_use_id.clone(),
                        decided_by: d.decided_by.clone(),
                    });
            }
        }
        index
    }

    /// The pending calls, as event keys.
    pub fn pending_keys(&self) -> impl Iterator<Item = u64> + '_ {
        self.pending.iter().map(|id| event_key(id))
    }

    /// Marks calls as pending (replacing those marked before).
    pub fn set_pending(&mut self, keys: &BTreeSet<u64>) {
        self.pending = hex(keys);
    }

    /// The calls whose row names another session, as event keys.
    pub fn other_session_keys(&self) -> BTreeSet<u64> {
        self.other_session.iter().map(|id| event_key(id)).collect()
    }

    /// Sets the calls whose row names another session.
    pub fn set_other_session(&mut self, keys: &BTreeSet<u64>) {
        self.other_session = hex(keys);
    }
}

fn hex(keys: &BTreeSet<u64>) -> BTreeSet<String> {
    keys.iter().map(|k| format!("{k:016x}")).collect()
}

/// The calls whose decision differs between two indexes (added, removed or changed).
pub fn changed(old: &Index, new: &Index) -> BTreeSet<u64> {
    let mut keys: BTreeSet<u64> = old
        .iter()
        .filter(|(k, v)| new.get(k) != Some(v))
        .map(|(k, _)| *k)
        .collect();
    keys.extend(
        new.iter()
            .filter(|(k, v)| old.get(k) != Some(v))
            .map(|(k, _)| *k),
    );
    keys
}

/// Fills `decided_by` on the Claude Code rows of `events` that `index` holds a decision for and
/// their reader left empty. A row naming another session than the log is left, counted
/// (`otel-session-mismatch`) and noted in `other_session` (a row that names the same session is
/// taken out of it). Returns how many were filled.
pub fn apply(
    index: &Index,
    events: &mut [Event],
    other_session: &mut BTreeSet<u64>,
    bad: &mut BadCounts,
) -> usize {
    if index.is_empty() {
        return 0;
    }
    let mut filled = 0;
    for event in events {
        if event.agent != agent::CLAUDE_CODE {
            continue;
        }
        let key = event_key(&event.event_id);
        let Some(joined) = index.get(&key) else {
            continue;
        };
        if event.tool_use_id.as_deref() != Some(joined.tool_use_id.as_str()) {
            continue;
        }
        if event.session_id != joined.session_id {
            bad.add("otel-session-mismatch");
            other_session.insert(key);
            continue;
        }
        other_session.remove(&key);
        if event.decided_by.is_none() {
            event.decided_by = Some(joined.decided_by.clone());
            filled += 1;
        }
    }
    filled
}

/// The calls of `index` by whether their row is in the table (`in_table` says whether an event
/// id has one) and names the log's session.
pub fn counts(
    index: &Index,
    other_session: &BTreeSet<u64>,
    in_table: impl Fn(u64) -> bool,
) -> DecisionCounts {
    let mut counts = DecisionCounts {
        recorded: index.len() as u64,
        ..DecisionCounts::default()
    };
    for key in index.keys() {
        if !in_table(*key) {
            counts.unmatched += 1;
        } else if other_session.contains(key) {
            counts.other_session += 1;
        } else {
            counts.joined += 1;
        }
    }
    counts
}
