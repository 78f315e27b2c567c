//! `zotero-mcp add`: adds papers by identifier through the service and prints one line per
//! identifier.

use std::process::ExitCode;

use tokio_util::sync::CancellationToken;

use crate::config::Config;
use crate::service::identify::{add_by_identifiers, AddRequest, AddStatus, PdfOutcome, PdfStatus};
use crate::service::ZoteroService;

/// `zotero-mcp add`'s arguments.
pub struct CliAdd {
    pub identifiers: Vec<String>,
    pub library: Option<String>,
    pub collection: Option<String>,
    pub tags: Vec<String>,
    pub attach_pdf: bool,
    pub dry_run: bool,
}

/// `zotero-mcp add <identifier>…`: adds them and prints one line each (stdout), what went
/// wrong on stderr; exit 0 when every identifier ended in the library, 1 otherwise, 2 for
/// a configuration or argument error.
pub async fn run(config: Config, args: CliAdd) -> ExitCode {
    let svc = match ZoteroService::new(&config) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("zotero-mcp: {e}");
            return ExitCode::from(2);
        }
    };
    let named = match args
        .library
        .as_deref()
        .map(str::parse::<zotero_api::LibraryRef>)
    {
        None => None,
        Some(Ok(l)) => Some(l),
        Some(Err(_)) => {
            eprintln!("zotero-mcp: --library takes user or group:<id>");
            return ExitCode::from(2);
        }
    };
    let lib = match svc.library(named) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("zotero-mcp: {}", e.message);
            return ExitCode::from(2);
        }
    };
    let cancel = CancellationToken::new();
    let collection = match &args.collection {
        None => None,
        Some(c) => {
            let target = match zotero_api::ObjectKey::parse(c) {
                Ok(k) => zotero_api::collections::CollectionRef::Key(k),
                Err(_) => zotero_api::collections::CollectionRef::Name(c.clone()),
            };
            match lib.resolve_collection(&target, &cancel).await {
                Ok(k) => Some(k),
                Err(e) => {
                    eprintln!("zotero-mcp: {e}");
                    return ExitCode::from(2);
                }
            }
        }
    };
    let req = AddRequest {
        inputs: args.identifiers,
        collection,
        tags: args.tags,
        attach_pdf: args.attach_pdf,
        dry_run: args.dry_run,
    };
    let outcomes = match add_by_identifiers(&svc, lib, req, None, &cancel).await {
        Ok(o) => o,
        Err(e) => {
            eprintln!("zotero-mcp: {}", e.message);
            return ExitCode::FAILURE;
        }
    };
    let mut all_in = true;
    for o in &outcomes {
        let status = match o.status {
            AddStatus::Created => "added",
            AddStatus::AlreadyInLibrary => "already in the library",
            AddStatus::SameAsEarlier => "same work as above",
            AddStatus::WouldCreate => "would be added",
            AddStatus::NotFound => "not found",
            AddStatus::Failed => "failed",
            AddStatus::NotAttempted => "not attempted",
        };
        all_in &= matches!(
            o.status,
            AddStatus::Created
                | AddStatus::AlreadyInLibrary
                | AddStatus::SameAsEarlier
                | AddStatus::WouldCreate
        );
        let key = o.item_key.as_deref().unwrap_or("-");
        let title = o.title.as_deref().unwrap_or("");
        let pdf = match o.pdf.as_ref().map(|p| &p.status) {
            Some(PdfStatus::Attached) => ", PDF attached",
            Some(PdfStatus::AlreadyAttached) => ", PDF already attached",
            Some(PdfStatus::NoneOpenAccess) => ", no open-access PDF",
            Some(PdfStatus::Failed) => ", PDF failed",
            _ => "",
        };
        println!(
            "{}\t{status}\t{key}\t{title}{pdf}",
            crate::text::quote(&o.input)
        );
        if let Some(e) = &o.error {
            eprintln!("{}: {e}", crate::text::quote(&o.input));
        }
        if let Some(PdfOutcome {
            status: PdfStatus::Failed,
            reason: Some(r),
            ..
        }) = &o.pdf
        {
            eprintln!("{}: the PDF: {r}", crate::text::quote(&o.input));
        }
    }
    if all_in {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
