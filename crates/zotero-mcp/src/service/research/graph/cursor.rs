//! The cursors of `zotero_find_related`'s lists: which list a cursor continues and where,
//! as the answer writes it and as a later call passes it back.

/// Which list a cursor continues.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListKind {
    References,
    Citing,
    CoCited,
}

impl ListKind {
    fn tag(self) -> &'static str {
        match self {
            ListKind::References => "r",
            ListKind::Citing => "c",
            ListKind::CoCited => "k",
        }
    }

    /// The `direction` a cursor of this list is passed with.
    pub fn direction_name(self) -> &'static str {
        match self {
            ListKind::References => "references",
            ListKind::Citing => "citing",
            ListKind::CoCited => "co_cited",
        }
    }
}

/// Where a list goes on: in an OpenAlex list (its work's id, the page size, the cursor of
/// the page and how many of that page were shown, how many works came before that page), or
/// at an offset (Crossref's reference list, the co-cited ranking).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cursor {
    OpenAlex {
        list: ListKind,
        work: String,
        per_page: u32,
        skip: u32,
        seen: u64,
        cursor: String,
    },
    Offset {
        list: ListKind,
        crossref: bool,
        offset: u64,
    },
}

impl Cursor {
    pub fn list(&self) -> ListKind {
        match self {
            Cursor::OpenAlex { list, .. } | Cursor::Offset { list, .. } => *list,
        }
    }

    /// The cursor as the answer gives it.
    pub fn encode(&self) -> String {
        match self {
            Cursor::OpenAlex {
                list,
                work,
                per_page,
                skip,
                seen,
                cursor,
            } => format!("{}.oa.{work}.{per_page}.{skip}.{seen}.{cursor}", list.tag()),
            Cursor::Offset {
                list,
                crossref,
                offset,
            } => format!(
                "{}.{}.{offset}",
                list.tag(),
                if *crossref { "cr" } else { "at" }
            ),
        }
    }

    /// A cursor an answer gave; `None` for anything else.
    pub fn decode(s: &str) -> Option<Cursor> {
        let mut parts = s.splitn(7, '.');
        let list = match parts.next()? {
            "r" => ListKind::References,
            "c" => ListKind::Citing,
            "k" => ListKind::CoCited,
            _ => return None,
        };
        match parts.next()? {
            "oa" => {
                let work = parts.next()?.to_string();
                let valid_work = work.len() > 1
                    && work.starts_with('W')
                    && work.bytes().skip(1).all(|b| b.is_ascii_digit());
                let per_page: u32 = parts.next()?.parse().ok()?;
                let skip: u32 = parts.next()?.parse().ok()?;
                let seen: u64 = parts.next()?.parse().ok()?;
                let cursor = parts.next()?.to_string();
                let valid_cursor = !cursor.is_empty()
                    && cursor.len() <= 1_000
                    && cursor
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"+/=*-_".contains(&b));
                (valid_work
                    && valid_cursor
                    && (1..=MAX_PER_PAGE).contains(&per_page)
                    && skip < per_page
                    && list != ListKind::CoCited)
                    .then_some(Cursor::OpenAlex {
                        list,
                        work,
                        per_page,
                        skip,
                        seen,
                        cursor,
                    })
            }
            kind @ ("cr" | "at") => {
                let offset: u64 = parts.next()?.parse().ok()?;
                let crossref = kind == "cr";
                let fits = if crossref {
                    list == ListKind::References
                } else {
                    list == ListKind::CoCited
                };
                (fits && parts.next().is_none()).then_some(Cursor::Offset {
                    list,
                    crossref,
                    offset,
                })
            }
            _ => None,
        }
    }
}

/// The most works a page holds (and OpenAlex's `per-page` asked).
pub const MAX_PER_PAGE: u32 = 50;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_strangers_are_refused() {
        for c in [
            Cursor::OpenAlex {
                list: ListKind::Citing,
                work: "W123".into(),
                per_page: 20,
                skip: 3,
                seen: 40,
                cursor: "IlsxNjA5MzcyODAwMDAwLCAn=".into(),
            },
            Cursor::Offset {
                list: ListKind::References,
                crossref: true,
                offset: 25,
            },
            Cursor::Offset {
                list: ListKind::CoCited,
                crossref: false,
                offset: 5,
            },
        ] {
            assert_eq!(Cursor::decode(&c.encode()), Some(c));
        }
        for bad in [
            "",
            "x.oa.W1.20.0.0.*",
            "c.oa.X1.20.0.0.*",
            "c.oa.W1.0.0.0.*",
            "c.oa.W1.20.20.0.*",
            "c.oa.W1.20.0.0.a&b",
            "c.cr.5",
            "r.at.5",
            "k.oa.W1.20.0.0.*",
            "r.cr.x",
        ] {
            assert_eq!(Cursor::decode(bad), None, "{bad}");
        }
    }
}
