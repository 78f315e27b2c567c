//! Crossref's reference list of a work, for works OpenAlex lists no references of.

use serde_json::Value;

use super::cursor::{Cursor, ListKind};
use super::works::{at, crossref_reference, fit};
use super::{Graph, Work, WorkList};
use crate::error::ToolError;

impl Graph<'_> {
    /// Crossref's `reference` list of `doi` from `offset` (in Crossref's order: it has no
    /// citation counts).
    pub(super) async fn crossref_references(
        &self,
        doi: &str,
        offset: u64,
        chars: usize,
        why: &str,
    ) -> Result<WorkList, ToolError> {
        let record = self
            .svc
            .metadata
            .crossref_work(doi, self.cancel)
            .await
            .map_err(ToolError::from)?;
        let refs: Vec<Value> = record
            .as_ref()
            .and_then(|r| at(r, "reference").as_array())
            .cloned()
            .unwrap_or_default();
        let total = refs.len() as u64;
        let mut works: Vec<Work> = refs
            .iter()
            .skip(usize::try_from(offset).unwrap_or(usize::MAX))
            .take(self.per_page as usize)
            .map(crossref_reference)
            .collect();
        fit(&mut works, chars);
        for w in &mut works {
            w.in_library = self.in_library(w).await?;
        }
        let after = offset + works.len() as u64;
        let next = (after < total).then_some(Cursor::Offset {
            list: ListKind::References,
            crossref: true,
            offset: after,
        });
        let note = match (&record, why.is_empty()) {
            (_, true) => None,
            (None, false) => Some(format!("{why}, nor does Crossref")),
            (Some(_), false) if total == 0 => Some(format!(
                "{why}, and Crossref's record has no reference list (its publisher deposited none)"
            )),
            (Some(_), false) => Some(format!("{why}: these are Crossref's, in its order")),
        };
        Ok(WorkList {
            kind: ListKind::References,
            source: "Crossref",
            total,
            works,
            next,
            note,
        })
    }
}
