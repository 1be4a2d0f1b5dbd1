//! A minimal PDF writer: pages of left-aligned text lines in Helvetica, enough for an invoice
//! that any reader opens and prints. Text is encoded as WinAnsi (Latin-1); the Turkish
//! letters it lacks (ğ, ş, ı, İ, Ğ, Ş) are written as their unaccented forms, anything else
//! outside it as `?`.

/// A4 in points.
const WIDTH: u32 = 595;
const HEIGHT: u32 = 842;
const MARGIN: u32 = 56;
const LEADING: u32 = 14;
const LINES_PER_PAGE: usize = ((HEIGHT - 2 * MARGIN) / LEADING) as usize;

/// One line of text and its size in points.
pub struct Line {
    pub text: String,
    pub size: u8,
}

impl Line {
    pub fn new(text: impl Into<String>) -> Line {
        Line { text: text.into(), size: 10 }
    }

    pub fn heading(text: impl Into<String>) -> Line {
        Line { text: text.into(), size: 14 }
    }
}

/// The document's bytes: `lines` flowed onto as many pages as they need.
pub fn render(title: &str, lines: &[Line]) -> Vec<u8> {
    let pages: Vec<&[Line]> = if lines.is_empty() { vec![&[][..]] } else { lines.chunks(LINES_PER_PAGE).collect() };
    // Objects: 1 catalog, 2 page tree, 3 font, 4 info, then a page and its content per page.
    let first_page = 5;
    let mut objects: Vec<Vec<u8>> = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        format!(
            "<< /Type /Pages /Kids [{}] /Count {} >>",
            (0..pages.len()).map(|i| format!("{} 0 R", first_page + 2 * i)).collect::<Vec<_>>().join(" "),
            pages.len()
        )
        .into_bytes(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>".to_vec(),
        [b"<< /Title (".as_slice(), &escape(title), b") /Producer (TNS) >>"].concat(),
    ];
    for (i, page) in pages.iter().enumerate() {
        let content_id = first_page + 2 * i + 1;
        objects.push(
            format!(
                "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {WIDTH} {HEIGHT}] \
                 /Resources << /Font << /F1 3 0 R >> >> /Contents {content_id} 0 R >>"
            )
            .into_bytes(),
        );
        let mut stream = format!("BT {LEADING} TL {MARGIN} {} Td\n", HEIGHT - MARGIN).into_bytes();
        for line in *page {
            stream.extend_from_slice(format!("/F1 {} Tf (", line.size).as_bytes());
            stream.extend_from_slice(&escape(&line.text));
            stream.extend_from_slice(b") Tj T*\n");
        }
        stream.extend_from_slice(b"ET");
        let mut obj = format!("<< /Length {} >>\nstream\n", stream.len()).into_bytes();
        obj.extend_from_slice(&stream);
        obj.extend_from_slice(b"\nendstream");
        objects.push(obj);
    }
    let mut out = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n".to_vec();
    let mut offsets = vec![];
    for (i, obj) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
        out.extend_from_slice(obj);
        out.extend_from_slice(b"\nendobj\n");
    }
    let xref = out.len();
    out.extend_from_slice(format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes());
    for o in offsets {
        out.extend_from_slice(format!("{o:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!("trailer\n<< /Size {} /Root 1 0 R /Info 4 0 R >>\nstartxref\n{xref}\n%%EOF\n", objects.len() + 1)
            .as_bytes(),
    );
    out
}

/// `s` as the bytes of a PDF string literal's body, WinAnsi-encoded.
fn escape(s: &str) -> Vec<u8> {
    let mut out = vec![];
    for c in s.chars() {
        let c = match c {
            'ğ' => 'g',
            'Ğ' => 'G',
            'ş' => 's',
            'Ş' => 'S',
            'ı' => 'i',
            'İ' => 'I',
            '\u{2013}' | '\u{2014}' => '-',
            c => c,
        };
        match c {
            '(' | ')' | '\\' => out.extend_from_slice(&[b'\\', c as u8]),
            ' '..='~' => out.push(c as u8),
            // Latin-1's letters are WinAnsi's too; written octal so the file stays ASCII.
            '\u{a0}'..='\u{ff}' => out.extend_from_slice(format!("\\{:03o}", c as u32).as_bytes()),
            _ => out.push(b'?'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every cross-reference entry points at its object, `startxref` at the table, and each
    /// stream's `/Length` is its length (offsets are bytes, so the checks index the bytes).
    fn assert_well_formed(pdf: &[u8]) {
        let text = String::from_utf8_lossy(pdf);
        assert!(pdf.starts_with(b"%PDF-1.4\n") && pdf.ends_with(b"%%EOF\n"));
        let startxref: usize = text.rsplit("startxref\n").next().unwrap().lines().next().unwrap().parse().unwrap();
        let table = std::str::from_utf8(&pdf[startxref..]).expect("the table is ASCII");
        assert!(table.starts_with("xref\n0 "));
        let count: usize = table.lines().nth(1).unwrap().split(' ').nth(1).unwrap().parse().unwrap();
        for (n, entry) in table.lines().skip(3).take(count - 1).enumerate() {
            assert_eq!(entry.len(), 19, "entries are 20 bytes with the newline: {entry:?}");
            let at: usize = entry[..10].parse().unwrap();
            assert!(pdf[at..].starts_with(format!("{} 0 obj\n", n + 1).as_bytes()), "object {}", n + 1);
        }
        let find = |from: usize, what: &[u8]| pdf[from..].windows(what.len()).position(|w| w == what).map(|p| p + from);
        let mut from = 0;
        while let Some(at) = find(from, b"/Length ") {
            let digits: String = pdf[at + 8..].iter().take_while(|b| b.is_ascii_digit()).map(|&b| b as char).collect();
            let start = find(at, b"stream\n").unwrap() + 7;
            assert!(pdf[start + digits.parse::<usize>().unwrap()..].starts_with(b"\nendstream"));
            from = start;
        }
    }

    #[test]
    fn a_document_is_well_formed_and_holds_its_text() {
        let pdf = render("Invoice 7", &[Line::heading("Invoice 7"), Line::new("Total (KDV included): 118.80 TRY")]);
        assert_well_formed(&pdf);
        let text = String::from_utf8_lossy(&pdf);
        assert!(text.contains("(Total \\(KDV included\\): 118.80 TRY) Tj"), "{text}");
        assert!(text.contains("/Count 1"));
    }

    #[test]
    fn long_documents_flow_onto_more_pages() {
        let lines: Vec<Line> = (0..120).map(|i| Line::new(format!("line {i}"))).collect();
        let pdf = render("long", &lines);
        assert_well_formed(&pdf);
        assert!(String::from_utf8_lossy(&pdf).contains(&format!("/Count {}", 120usize.div_ceil(LINES_PER_PAGE))));
    }

    #[test]
    fn turkish_text_is_written_in_winansi() {
        assert_eq!(escape("Çağrı Şoförü İzmir"), b"\\307agri Sof\\366r\\374 Izmir".to_vec());
        assert_eq!(escape("a\\b"), b"a\\\\b".to_vec());
        assert_eq!(escape("日"), b"?".to_vec());
    }
}
