//! `edit_objects`: the rounds of an edit. Plan each edit against the object as first read;
//! each round settles what needs no write, writes the rest in batches, and reads again the
//! objects Zotero refused as stale or whose answer was lost, until every edit has an outcome.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::batch::{BatchResult, Write};
use super::merge::{collection_keys, patch_for, resolve, shows_change, tag_names, Plan};
use super::{Edit, EditOutcome, EditProgress, EditStatus, FieldChange, ObjectKind, WRITE_BATCH};
use crate::client::Library;
use crate::error::ZoteroError;
use crate::library::ObjectKey;
use crate::model::WireObject;
use crate::write::MAX_VERSION_RETRIES;

/// An edit still to be written: (index of the edit, its plan, the object as now known).
type Pending = (usize, Plan, WireObject);

fn outcome(key: &ObjectKey, status: EditStatus) -> EditOutcome {
    EditOutcome {
        key: key.clone(),
        status,
        version: None,
        changes: Vec::new(),
        data: None,
    }
}

/// The outcomes so far, by the edit's index, and the progress reported.
struct Ledger<'p> {
    outcomes: BTreeMap<usize, EditOutcome>,
    /// Outcomes counted as done for `progress`.
    done: u64,
    total: u64,
    progress: Option<EditProgress<'p>>,
    /// The edits whose write may have landed unseen.
    maybe_written: HashSet<usize>,
}

impl<'p> Ledger<'p> {
    fn new(total: u64, progress: Option<EditProgress<'p>>) -> Self {
        Self {
            outcomes: BTreeMap::new(),
            done: 0,
            total,
            progress,
            maybe_written: HashSet::new(),
        }
    }

    /// Records an outcome without reporting progress.
    fn settle(&mut self, i: usize, o: EditOutcome) {
        self.outcomes.insert(i, o);
    }

    /// Records an outcome and reports one more object done.
    fn finish(&mut self, i: usize, o: EditOutcome) {
        self.settle(i, o);
        self.done += 1;
        if let Some(p) = self.progress {
            p(self.done, self.total);
        }
    }

    fn maybe_written(&self, i: usize) -> bool {
        self.maybe_written.contains(&i)
    }

    /// What a batch answered for one write; the plan back when the object must be read again.
    fn record(&mut self, write: Write, result: BatchResult) -> Option<(usize, Plan)> {
        let (i, plan, object, _, changes) = write;
        let key = plan.edit.key.clone();
        match result {
            BatchResult::Written(wire) => self.finish(
                i,
                EditOutcome {
                    key,
                    status: EditStatus::Changed,
                    version: wire.version.or(object.version),
                    changes,
                    data: Some(wire.data),
                },
            ),
            BatchResult::Unchanged => self.finish(
                i,
                EditOutcome {
                    key,
                    status: EditStatus::Unchanged,
                    version: object.version,
                    changes: Vec::new(),
                    data: Some(object.data),
                },
            ),
            BatchResult::Failed { code, message } => {
                self.finish(i, outcome(&key, EditStatus::Failed { code, message }))
            }
            BatchResult::Stale => return Some((i, plan)),
            BatchResult::Unknown => {
                self.maybe_written.insert(i);
                return Some((i, plan));
            }
        }
        None
    }

    /// One outcome per key, in their order; `NotAttempted` where none was settled.
    fn into_outcomes(mut self, keys: &[ObjectKey]) -> Vec<EditOutcome> {
        keys.iter()
            .enumerate()
            .map(|(i, key)| {
                self.outcomes
                    .remove(&i)
                    .unwrap_or_else(|| outcome(key, EditStatus::NotAttempted))
            })
            .collect()
    }
}

/// Plans each edit against its object as first read; an object not found, or changed since
/// the version the caller expects, is settled at once.
fn plan_edits(
    edits: Vec<Edit>,
    first: &HashMap<String, WireObject>,
    ledger: &mut Ledger<'_>,
) -> Vec<Pending> {
    let mut pending = Vec::new();
    for (i, edit) in edits.into_iter().enumerate() {
        let Some(object) = first.get(edit.key.as_str()) else {
            ledger.settle(i, outcome(&edit.key, EditStatus::NotFound));
            continue;
        };
        let version = object.version.unwrap_or(0);
        if let Some(expected) = edit.expect_version {
            if expected != version {
                let mut o = outcome(
                    &edit.key,
                    EditStatus::Stale {
                        current_version: version,
                    },
                );
                o.version = Some(version);
                o.data = Some(object.data.clone());
                ledger.settle(i, o);
                continue;
            }
        }
        let base = object.data.clone();
        let plan = Plan {
            tags: resolve(&edit.tags, &tag_names(&base)),
            collections: resolve(&edit.collections, &collection_keys(&base)),
            edit,
            base,
        };
        pending.push((i, plan, object.clone()));
    }
    pending
}

/// What one pending object needs in this round.
enum Next {
    /// Nothing to write: this is its outcome.
    Settled(EditOutcome),
    /// The fields to send and the changes they make.
    Write(Map<String, Value>, Vec<FieldChange>),
}

/// Decides what a pending object needs now: after a write that may have landed unseen, the
/// object says whether it did; else the merge says conflict, nothing to do, a dry run's
/// answer, or a write (while rounds are left).
fn next_step(
    kind: ObjectKind,
    plan: &Plan,
    object: &WireObject,
    maybe_written: bool,
    dry_run: bool,
    round: usize,
) -> Next {
    let key = plan.edit.key.clone();
    let as_read = |status, changes| EditOutcome {
        key: key.clone(),
        status,
        version: object.version,
        changes,
        data: Some(object.data.clone()),
    };
    let landed = if maybe_written {
        shows_change(plan, &object.data)
    } else {
        None
    };
    if let Some(changes) = landed {
        let status = if changes.is_empty() {
            EditStatus::Unchanged
        } else {
            EditStatus::Changed
        };
        return Next::Settled(as_read(status, changes));
    }
    match patch_for(plan, &object.data) {
        Err(conflicts) => Next::Settled(as_read(EditStatus::Conflict(conflicts), Vec::new())),
        Ok((patch, _)) if patch.is_empty() => {
            Next::Settled(as_read(EditStatus::Unchanged, Vec::new()))
        }
        Ok((_, changes)) if dry_run => Next::Settled(as_read(EditStatus::WouldChange, changes)),
        Ok((patch, changes)) if round < MAX_VERSION_RETRIES => Next::Write(patch, changes),
        Ok(_) => Next::Settled(outcome(
            &key,
            EditStatus::Failed {
                code: 412,
                message: format!(
                    "{} {key} kept changing in Zotero while this call wrote it ({} attempts); nothing was written to it",
                    kind.noun(),
                    MAX_VERSION_RETRIES
                ),
            },
        )),
    }
}

impl Library<'_> {
    /// Applies each edit to its object, version-checked, merging with changes made in
    /// Zotero meanwhile (see the module comment). With `dry_run`, reads and answers what
    /// would change (`WouldChange`) without writing. One outcome per edit, in their order.
    /// An `Err` means nothing was written (the objects could not be read, or the key may
    /// not write here); after the first write every failure is an object's outcome.
    pub async fn edit_objects(
        &self,
        kind: ObjectKind,
        edits: Vec<Edit>,
        dry_run: bool,
        cancel: &CancellationToken,
        progress: Option<EditProgress<'_>>,
    ) -> Result<Vec<EditOutcome>, ZoteroError> {
        self.require_write(false, cancel).await?;
        let keys: Vec<ObjectKey> = edits.iter().map(|e| e.key.clone()).collect();
        let first = self.read_objects(kind, &keys, cancel).await?;
        if kind == ObjectKind::Item {
            for e in &edits {
                let (Some(creators), Some(object)) =
                    (e.set.get("creators"), first.get(e.key.as_str()))
                else {
                    continue;
                };
                let item_type = object
                    .data
                    .get("itemType")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                self.check_creator_types_locally(item_type, creators, cancel)
                    .await?;
            }
        }
        let mut ledger = Ledger::new(edits.len() as u64, progress);
        let mut pending = plan_edits(edits, &first, &mut ledger);
        ledger.done = ledger.outcomes.len() as u64;
        for round in 0..=MAX_VERSION_RETRIES {
            if pending.is_empty() {
                break;
            }
            let to_write = settle_round(kind, pending, dry_run, round, &mut ledger);
            let reread = self.write_round(kind, to_write, cancel, &mut ledger).await;
            if reread.is_empty() {
                break;
            }
            match self.read_again(kind, reread, cancel, &mut ledger).await {
                Some(again) => pending = again,
                None => break,
            }
        }
        Ok(ledger.into_outcomes(&keys))
    }

    /// Sends the writes of a round, 50 a batch, and records each answer; returns the edits
    /// whose objects must be read again. Once cancelled, the batches left are not sent.
    async fn write_round(
        &self,
        kind: ObjectKind,
        to_write: Vec<Write>,
        cancel: &CancellationToken,
        ledger: &mut Ledger<'_>,
    ) -> Vec<(usize, Plan)> {
        let mut reread = Vec::new();
        let mut batches = to_write.into_iter().peekable();
        while batches.peek().is_some() {
            let batch: Vec<_> = batches.by_ref().take(WRITE_BATCH).collect();
            if cancel.is_cancelled() {
                for (i, plan, ..) in batch {
                    ledger.settle(i, outcome(&plan.edit.key, EditStatus::NotAttempted));
                }
                continue;
            }
            let results = self.write_batch(kind, &batch, cancel).await;
            for (write, result) in batch.into_iter().zip(results) {
                reread.extend(ledger.record(write, result));
            }
        }
        reread
    }

    /// Reads again the objects of these edits, even when the call was cancelled: an object
    /// whose write may have landed must be reported as it is. Returns what is still to be
    /// written, or `None` when the read failed (each of them then failed).
    async fn read_again(
        &self,
        kind: ObjectKind,
        reread: Vec<(usize, Plan)>,
        cancel: &CancellationToken,
        ledger: &mut Ledger<'_>,
    ) -> Option<Vec<Pending>> {
        let keys: Vec<ObjectKey> = reread.iter().map(|(_, p)| p.edit.key.clone()).collect();
        let now = match self
            .read_objects(kind, &keys, &CancellationToken::new())
            .await
        {
            Ok(now) => now,
            Err(e) => {
                for (i, plan) in reread {
                    let message = if ledger.maybe_written(i) {
                        format!("the write's answer was lost and reading the {} again failed too ({e}): it may or may not have been changed; read it to see", kind.noun())
                    } else {
                        format!("it changed in Zotero and reading it again failed: {e}")
                    };
                    ledger.settle(
                        i,
                        outcome(&plan.edit.key, EditStatus::Failed { code: 0, message }),
                    );
                }
                return None;
            }
        };
        let mut pending = Vec::new();
        for (i, plan) in reread {
            match now.get(plan.edit.key.as_str()) {
                Some(object) if !cancel.is_cancelled() => pending.push((i, plan, object.clone())),
                Some(object) => {
                    // Cancelled: report what the object shows, write nothing more.
                    let o = match shows_change(&plan, &object.data) {
                        Some(changes) if ledger.maybe_written(i) => EditOutcome {
                            key: plan.edit.key.clone(),
                            status: EditStatus::Changed,
                            version: object.version,
                            changes,
                            data: Some(object.data.clone()),
                        },
                        _ => outcome(&plan.edit.key, EditStatus::NotAttempted),
                    };
                    ledger.settle(i, o);
                }
                None => ledger.settle(i, outcome(&plan.edit.key, EditStatus::NotFound)),
            }
        }
        Some(pending)
    }
}

/// Settles each pending object that needs no write in this round; returns the writes.
fn settle_round(
    kind: ObjectKind,
    pending: Vec<Pending>,
    dry_run: bool,
    round: usize,
    ledger: &mut Ledger<'_>,
) -> Vec<Write> {
    let mut to_write = Vec::new();
    for (i, plan, object) in pending {
        match next_step(
            kind,
            &plan,
            &object,
            ledger.maybe_written(i),
            dry_run,
            round,
        ) {
            Next::Settled(o) => ledger.finish(i, o),
            Next::Write(patch, changes) => to_write.push((i, plan, object, patch, changes)),
        }
    }
    to_write
}
