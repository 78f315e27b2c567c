//! The co-cited list: the works most often in the reference lists of 2 to 20 given works.

use std::collections::HashMap;

use serde_json::Value;
use zotero_metadata::services::{WorksQuery, MAX_IDS_PER_FILTER};

use super::cursor::{Cursor, ListKind};
use super::works::{at, fit, id_number, short_id, work_of};
use super::{Graph, Related, Seed, Work, WorkList, LIST_FIELDS};
use crate::error::ToolError;

impl Graph<'_> {
    /// The works most often in the seeds' reference lists, from `offset`.
    pub(super) async fn co_cited(
        &self,
        seeds: &[Seed],
        offset: u64,
        chars: usize,
    ) -> Result<Related, ToolError> {
        let mut counts: HashMap<String, u32> = HashMap::new();
        let mut seed_ids: Vec<String> = Vec::new();
        let mut not_found = Vec::new();
        for seed in seeds {
            let doi = self.doi_of(seed).await?;
            let Some(work) = self.openalex_work(&doi).await? else {
                not_found.push(doi);
                continue;
            };
            if let Some(id) = short_id(at(&work, "id")) {
                seed_ids.push(id);
            }
            let mut refs: Vec<String> = at(&work, "referenced_works")
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(short_id)
                .collect();
            refs.sort();
            refs.dedup();
            for r in refs {
                *counts.entry(r).or_default() += 1;
            }
        }
        for id in &seed_ids {
            counts.remove(id);
        }
        let mut ranked: Vec<(String, u32)> = counts.into_iter().collect();
        ranked.sort_by(|a, b| {
            b.1.cmp(&a.1)
                .then_with(|| id_number(&a.0).cmp(&id_number(&b.0)))
        });
        let total = ranked.len() as u64;
        let page: Vec<(String, u32)> = ranked
            .into_iter()
            .skip(usize::try_from(offset).unwrap_or(usize::MAX))
            .take((self.per_page as usize).min(MAX_IDS_PER_FILTER))
            .collect();
        let mut by_id: HashMap<String, Value> = HashMap::new();
        if !page.is_empty() {
            let ids: Vec<&str> = page.iter().map(|(id, _)| id.as_str()).collect();
            let filter = format!("openalex:{}", ids.join("|"));
            let query = WorksQuery {
                filter: &filter,
                sort: None,
                per_page: page.len() as u32,
                cursor: "*",
                select: LIST_FIELDS,
            };
            let found = self
                .svc
                .metadata
                .openalex_works(&query, self.cancel)
                .await
                .map_err(ToolError::from)?;
            for w in found.results {
                if let Some(id) = short_id(at(&w, "id")) {
                    by_id.insert(id, w);
                }
            }
        }
        let mut works: Vec<Work> = page
            .iter()
            .map(|(id, n)| {
                let mut w = by_id.get(id).map(work_of).unwrap_or_else(|| Work {
                    openalex_id: Some(format!("https://openalex.org/{id}")),
                    ..Work::default()
                });
                w.cited_by_given = Some(*n);
                w
            })
            .collect();
        fit(&mut works, chars);
        for w in &mut works {
            w.in_library = self.in_library(w).await?;
        }
        let after = offset + works.len() as u64;
        let next = (after < total).then_some(Cursor::Offset {
            list: ListKind::CoCited,
            crossref: false,
            offset: after,
        });
        let note = (seed_ids.is_empty())
            .then(|| "OpenAlex knows none of the given works: nothing to count".to_string());
        Ok(Related {
            co_cited: Some(WorkList {
                kind: ListKind::CoCited,
                source: "OpenAlex",
                total,
                works,
                next,
                note,
            }),
            not_found,
            ..Related::default()
        })
    }
}
