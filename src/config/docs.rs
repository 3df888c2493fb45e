//! [`PARAMS`] rendered into README.md's and docs/CONFIG.md's tables (between [`TABLE_BEGIN`] and
//! [`TABLE_END`]; the config tests fail when either document differs).
use super::params::{Param, PARAMS};

/// How much of each row's `doc` [`markdown_table`] shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DocLength {
    /// The first sentence (up to the first ". "): README.md's table.
    Summary,
    /// All of it: docs/CONFIG.md's table.
    Full,
}

/// The line before the generated table in a document.
pub const TABLE_BEGIN: &str = "<!-- config:begin: generated from src/config PARAMS, do not edit -->";
/// The line after it.
pub const TABLE_END: &str = "<!-- config:end -->";

impl Param {
    /// The doc's first sentence, its period included.
    pub fn summary(&self) -> &'static str {
        self.doc.find(". ").map_or(self.doc, |end| &self.doc[..=end])
    }
}

/// [`PARAMS`] as a Markdown table (variable, default, accepted, meaning), one row per setting in
/// table order: the text README.md (with [`DocLength::Summary`]) and docs/CONFIG.md (with
/// [`DocLength::Full`]) carry between [`TABLE_BEGIN`] and [`TABLE_END`]. Names of variables and
/// socket options in the text are set as code; a `|` is escaped.
pub fn markdown_table(length: DocLength) -> String {
    let mut out = String::from("| variable | default | accepted | meaning |\n|---|---|---|---|\n");
    for p in PARAMS {
        let default = if p.default.is_empty() { "(unset)" } else { p.default };
        let doc = match length {
            DocLength::Summary => p.summary(),
            DocLength::Full => p.doc,
        };
        out += &format!(
            "| `{}` | {} | {} | {} |\n",
            p.name,
            markdown_cell(default),
            markdown_cell(p.accepted),
            markdown_cell(doc)
        );
    }
    out
}

/// One table cell: identifiers such as NCCL_PROTO or SO_SNDBUF in backticks, `|` escaped.
pub(super) fn markdown_cell(text: &str) -> String {
    let is_identifier = |w: &str| {
        w.contains('_')
            && w.starts_with(|c: char| c.is_ascii_uppercase() || c == '_')
            && w.chars().any(|c| c.is_ascii_uppercase())
            && w.chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
    };
    let mut out = String::with_capacity(text.len() + 16);
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if is_identifier(word) {
            out.push('`');
            out.push_str(word);
            out.push('`');
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
            continue;
        }
        flush(&mut word, &mut out);
        match c {
            '|' => out.push_str("\\|"),
            _ => out.push(c),
        }
    }
    flush(&mut word, &mut out);
    out
}

/// The text between [`TABLE_BEGIN`] and [`TABLE_END`] in `document`, or `None` without both lines.
pub fn generated_block(document: &str) -> Option<&str> {
    let start = document.find(TABLE_BEGIN)? + TABLE_BEGIN.len();
    let start = start + document[start..].find('\n')? + 1;
    let len = document[start..].find(TABLE_END)?;
    Some(&document[start..start + len])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_rows_set_identifiers_as_code_and_escape_bars() {
        assert_eq!(
            markdown_cell("sets NCCL_PROTO=Simple, SO_SNDBUF and _NRINGS; a|b, K/M, lo.2, GPUDirectTCPX"),
            "sets `NCCL_PROTO`=Simple, `SO_SNDBUF` and `_NRINGS`; a\\|b, K/M, lo.2, GPUDirectTCPX"
        );
        let table = markdown_table(DocLength::Summary);
        assert_eq!(table.lines().count(), PARAMS.len() + 2);
        assert!(table.contains("| `NCCL_TCPXR_STRIPES` | 4 | 1-16 | Inner connections (stripes) per NCCL connection;"));
        assert!(table.contains("| `NCCL_TCPXR_IFNAME` | (unset) |"));
        assert!(markdown_table(DocLength::Full).len() > table.len());
    }

    #[test]
    fn generated_block_is_the_text_between_the_marker_lines() {
        let doc = format!("intro\n{TABLE_BEGIN}\n| a |\n| b |\n{TABLE_END}\nrest\n");
        assert_eq!(generated_block(&doc), Some("| a |\n| b |\n"));
        assert_eq!(generated_block("no markers"), None);
        assert_eq!(generated_block(&format!("{TABLE_BEGIN}\n| a |\n")), None);
    }
}
