//! hetsim-charts: small SVG charts, shared by the CLI, the reports and the web UI, and the
//! export of a run's trace ([`trace`]): x–y charts of measured
//! and predicted points ([`xy`], the thesis's Figures 6.2–6.7 and sweep plots) and the Gantt
//! timeline of a run ([`timeline`]). Plain SVG text, so nothing needs a plotting stack; the
//! parts here (axes and ticks, text width, escaping, palette, the document frame) are what
//! both kinds of chart draw with.

pub mod axis;
pub mod timeline;
pub mod trace;
pub mod xy;

pub use timeline::{timeline_svg, timeline_svg_from_json, MAX_ROWS};
pub use xy::{Chart, Series};

/// Categorical colours (matplotlib's "tab10" order, which readers know from the thesis's
/// figures).
pub const PALETTE: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2",
];

/// The font size of labels [px]; titles are a little larger.
pub const FONT_SIZE: f64 = 12.0;

/// The width a sans-serif text is drawn at, estimated from its characters [px]: 0.6 em a
/// character is an upper bound for the common sans fonts' Latin letters and digits, so
/// layouts made with it leave room rather than clip.
pub fn text_width(text: &str, font_size: f64) -> f64 {
    text.chars().count() as f64 * 0.6 * font_size
}

/// `text` cut to fit `width` pixels, ending in an ellipsis where it was cut.
pub fn fit(text: &str, width: f64, font_size: f64) -> String {
    if text_width(text, font_size) <= width {
        return text.to_owned();
    }
    let keep = ((width / (0.6 * font_size)).floor() as usize).saturating_sub(1);
    let mut short: String = text.chars().take(keep).collect();
    short.push('…');
    short
}

/// `text` safe inside an SVG element or a double-quoted attribute.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The opening of a standalone SVG document on a white ground, with `title` as its tooltip
/// and accessible name.
fn open_svg(width: f64, height: f64, title: &str) -> String {
    format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="{FONT_SIZE}">
<title>{}</title>
<rect width="100%" height="100%" fill="white"/>
"#,
        escape(title)
    )
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Every `<text>` of `svg`: (x, anchor, font size, content with entities undone).
    fn texts(svg: &str) -> Vec<(f64, String, f64, String)> {
        let attribute = |tag: &str, name: &str| -> Option<String> {
            let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
            Some(tag[start..].split('"').next()?.to_owned())
        };
        svg.split("<text")
            .skip(1)
            .filter(|rest| !rest.split('>').next().unwrap_or("").contains("transform"))
            .map(|rest| {
                let (tag, rest) = rest.split_once('>').expect("a closed tag");
                let content = rest.split("</text>").next().expect("a closed element");
                let x = attribute(tag, "x").map_or(0.0, |x| x.parse().expect("a number x"));
                let anchor = attribute(tag, "text-anchor").unwrap_or_else(|| "start".into());
                let size =
                    attribute(tag, "font-size").map_or(FONT_SIZE, |s| s.parse().expect("a number size"));
                let content = content
                    .replace("&lt;", "<")
                    .replace("&gt;", ">")
                    .replace("&quot;", "\"")
                    .replace("&amp;", "&");
                (x, anchor, size, content)
            })
            .collect()
    }

    /// Asserts that no text of `svg` reaches past its left or right edge, by the width
    /// estimate the layouts use. Rotated texts (`transform`) are left out: they run along
    /// the height.
    pub(crate) fn assert_texts_inside(svg: &str, width: f64) {
        let all = texts(svg);
        assert!(!all.is_empty(), "no text in {svg}");
        for (x, anchor, size, content) in all {
            let w = text_width(&content, size);
            let (left, right) = match anchor.as_str() {
                "end" => (x - w, x),
                "middle" => (x - w / 2.0, x + w / 2.0),
                _ => (x, x + w),
            };
            assert!(
                left >= -0.01 && right <= width + 0.01,
                "{content:?} spans {left:.1}..{right:.1}, outside 0..{width}"
            );
        }
    }

    #[test]
    fn fit_cuts_long_text_with_an_ellipsis_to_the_width() {
        assert_eq!(fit("short", 100.0, 10.0), "short");
        let cut = fit("a rather long process name", 60.0, 10.0);
        assert!(cut.ends_with('…'), "{cut}");
        assert!(text_width(&cut, 10.0) <= 60.0, "{cut}");
        assert_eq!(escape(r#"<a & "b">"#), "&lt;a &amp; &quot;b&quot;&gt;");
    }
}
