//! Chart geometry for the summary page: everything the template needs to draw inline SVG
//! (positions, ticks, labels), computed here so the template only places elements.

use serde::Serialize;

use bookstore_record::latency_label;

/// The first series' colours, stable across pages; ceilings are grey ([`CEILING_COLOUR`]).
pub const PALETTE: [&str; 5] = ["#2f6fdb", "#d9822b", "#2a9d5c", "#a044b5", "#c0392b"];

/// The colour of series `index`: the palette's, then hues a golden angle apart, so any
/// number of stacks and variants get colours of their own.
pub fn series_colour(index: usize) -> String {
    if let Some(colour) = PALETTE.get(index) {
        return (*colour).to_owned();
    }
    let hue = (index as f64 * 137.507_764) % 360.0;
    let (saturation, lightness) = (0.55, 0.45);
    let chroma = (1.0 - (2.0 * lightness - 1.0_f64).abs()) * saturation;
    let x = chroma * (1.0 - ((hue / 60.0) % 2.0 - 1.0).abs());
    let (r, g, b) = match (hue / 60.0) as u32 {
        0 => (chroma, x, 0.0),
        1 => (x, chroma, 0.0),
        2 => (0.0, chroma, x),
        3 => (0.0, x, chroma),
        4 => (x, 0.0, chroma),
        _ => (chroma, 0.0, x),
    };
    let m = lightness - chroma / 2.0;
    let byte = |v: f64| ((v + m) * 255.0).round() as u8;
    format!("#{:02x}{:02x}{:02x}", byte(r), byte(g), byte(b))
}
/// The ceilings' colour.
pub const CEILING_COLOUR: &str = "#555e6b";

/// A tick on an axis.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Tick {
    /// Position along the axis, px.
    pub at: f64,
    /// What it says.
    pub label: String,
}

/// A legend entry.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Legend {
    /// Swatch colour, as the series is drawn.
    pub colour: String,
    /// What the series is (a stack, a variant, the ceiling).
    pub label: String,
}

/// One bar of a [`BarChart`], placed on its canvas.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Bar {
    /// Left, px.
    pub x: f64,
    /// Top, px.
    pub y: f64,
    /// Width, px.
    pub width: f64,
    /// Height, px.
    pub height: f64,
    /// Fill colour, the bar's series colour.
    pub colour: String,
    /// Tooltip (SVG `<title>`).
    pub title: String,
    /// Whisker of the min–max range over repeats, px (top and bottom), when repeated.
    pub range: Option<(f64, f64)>,
}

/// A horizontal mark across a group (a ceiling).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Mark {
    /// From, px.
    pub x1: f64,
    /// To, px.
    pub x2: f64,
    /// Height, px.
    pub y: f64,
    /// Tooltip (SVG `<title>`).
    pub title: String,
}

/// Grouped bars: one group per concurrency, one bar per stack, the ceiling as a line.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct BarChart {
    /// Canvas width, px.
    pub width: f64,
    /// Canvas height, px.
    pub height: f64,
    /// Plot area: left, top, right, bottom, px.
    pub plot: (f64, f64, f64, f64),
    /// Ticks of the value (vertical) axis, from 0 in "nice" steps ([`nice_step`]).
    pub y_ticks: Vec<Tick>,
    /// Group labels (under the groups).
    pub groups: Vec<Tick>,
    /// One per [`BarValue`]; a slot without a value is left empty.
    pub bars: Vec<Bar>,
    /// The ceilings, one per group that has one.
    pub marks: Vec<Mark>,
    /// What the value axis shows, with its unit.
    pub y_label: String,
}

/// One line of a line chart.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Series {
    /// Stroke colour.
    pub colour: String,
    /// `x,y x,y …` for an SVG polyline.
    pub points: String,
    /// Tooltip (SVG `<title>`).
    pub title: String,
    /// Drawn dashed (a second measure of the same target, e.g. its median beside its p99).
    pub dashed: bool,
}

/// A horizontal line across a plot, e.g. a latency objective.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Rule {
    /// Its height, px.
    pub y: f64,
    /// What it marks, written at its right end.
    pub label: String,
}

/// A point marked on a plot, e.g. a party's capacity on its objective.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Dot {
    /// Position, px.
    pub x: f64,
    /// Position, px.
    pub y: f64,
    /// Its series' colour.
    pub colour: String,
    /// Tooltip.
    pub title: String,
}

/// Lines over labelled axes.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LineChart {
    /// Canvas width, px.
    pub width: f64,
    /// Canvas height, px.
    pub height: f64,
    /// Plot area: left, top, right, bottom, px.
    pub plot: (f64, f64, f64, f64),
    /// Horizontal axis ticks.
    pub x_ticks: Vec<Tick>,
    /// Vertical axis ticks.
    pub y_ticks: Vec<Tick>,
    /// One line per target, in the order of the curves given.
    pub series: Vec<Series>,
    /// Horizontal axis label.
    pub x_label: String,
    /// Vertical axis label.
    pub y_label: String,
    /// Title above the plot.
    pub title: String,
    /// Horizontal lines across the plot.
    pub rules: Vec<Rule>,
    /// Points marked on it.
    pub dots: Vec<Dot>,
}

/// A tiny line without axes (per-second throughput in a table cell).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Sparkline {
    /// `x,y x,y …`.
    pub points: String,
    /// Tooltip with the values.
    pub title: String,
}

/// A "nice" step (1, 2 or 5 × 10^k) giving about `count` intervals over `0..=max`.
pub fn nice_step(max: f64, count: usize) -> f64 {
    if max <= 0.0 {
        return 1.0;
    }
    let raw = max / count.max(1) as f64;
    let power = 10f64.powf(raw.log10().floor());
    let fraction = raw / power;
    let nice = if fraction <= 1.0 {
        1.0
    } else if fraction <= 2.0 {
        2.0
    } else if fraction <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * power
}

/// A count with thousands separators or a k/M suffix, for axis labels.
pub fn short_number(value: f64) -> String {
    if value >= 1_000_000.0 {
        format!("{:.1}M", value / 1_000_000.0).replace(".0M", "M")
    } else if value >= 10_000.0 {
        format!("{:.0}k", value / 1_000.0)
    } else if value >= 1_000.0 {
        format!("{:.1}k", value / 1_000.0).replace(".0k", "k")
    } else if value == value.floor() {
        format!("{value:.0}")
    } else {
        format!("{value:.1}")
    }
}

/// One bar's data.
#[derive(Debug, Clone)]
pub struct BarValue {
    /// Group index (concurrency).
    pub group: usize,
    /// Position inside the group (the stack's index).
    pub slot: usize,
    /// Median value.
    pub value: f64,
    /// Min–max over repeats, when repeated.
    pub range: Option<(f64, f64)>,
    /// Fill colour: its series' (a stack's, a library's), the same on every chart of a page.
    pub colour: String,
    /// Tooltip (SVG `<title>`): what the bar stands for, with its value.
    pub title: String,
}

/// Grouped bars over `groups` with `per_group` bar slots each; `ceilings` per group.
pub fn bar_chart(
    groups: &[String],
    per_group: usize,
    values: &[BarValue],
    ceilings: &[(usize, f64, String)],
    y_label: &str,
) -> BarChart {
    let (width, height) = (540.0, 250.0);
    let plot = (64.0, 14.0, width - 12.0, height - 40.0);
    let top = values
        .iter()
        .map(|v| v.range.map_or(v.value, |r| r.1))
        .chain(ceilings.iter().map(|c| c.1))
        .fold(0.0, f64::max);
    let step = nice_step(top * 1.05, 5);
    let axis_max = (top * 1.05 / step).ceil().max(1.0) * step;
    let y = |value: f64| plot.3 - (value / axis_max) * (plot.3 - plot.1);
    let y_ticks = (0..=((axis_max / step).round() as usize))
        .map(|i| Tick { at: y(i as f64 * step), label: short_number(i as f64 * step) })
        .collect();
    let group_width = (plot.2 - plot.0) / groups.len().max(1) as f64;
    let bar_width = (group_width * 0.8) / per_group.max(1) as f64;
    let bars = values
        .iter()
        .map(|v| {
            let x = plot.0
                + v.group as f64 * group_width
                + group_width * 0.1
                + v.slot as f64 * bar_width;
            Bar {
                x,
                y: y(v.value),
                width: (bar_width - 2.0).max(1.0),
                height: plot.3 - y(v.value),
                colour: v.colour.clone(),
                title: v.title.clone(),
                range: v.range.map(|(low, high)| (y(high), y(low))),
            }
        })
        .collect();
    let marks = ceilings
        .iter()
        .map(|(group, value, title)| Mark {
            x1: plot.0 + *group as f64 * group_width + group_width * 0.05,
            x2: plot.0 + (*group as f64 + 1.0) * group_width - group_width * 0.05,
            y: y(*value),
            title: title.clone(),
        })
        .collect();
    let groups = groups
        .iter()
        .enumerate()
        .map(|(i, label)| Tick {
            at: plot.0 + (i as f64 + 0.5) * group_width,
            label: label.clone(),
        })
        .collect();
    BarChart { width, height, plot, y_ticks, groups, bars, marks, y_label: y_label.to_owned() }
}

/// One interval of a [`Forest`]: a ratio against the family's first, with its interval.
#[derive(Debug, Clone)]
pub struct ForestValue {
    /// The ratio.
    pub ratio: f64,
    /// Its interval.
    pub low: f64,
    /// Its interval's upper end.
    pub high: f64,
    /// Whether the method called it different (the interval excludes 1).
    pub called: bool,
    /// Its series' colour.
    pub colour: String,
    /// Tooltip.
    pub title: String,
}

/// One drawn row of a [`Forest`], px.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ForestRow {
    /// Height of the row's line.
    pub y: f64,
    /// The ratio's position.
    pub x: f64,
    /// The interval's ends (clipped to the plot; `clipped_low`/`clipped_high` say so).
    pub x_low: f64,
    /// The interval's upper end.
    pub x_high: f64,
    /// The interval runs past the plot's left edge.
    pub clipped_low: bool,
    /// The interval runs past the plot's right edge.
    pub clipped_high: bool,
    /// Called different: drawn solid, else hollow.
    pub called: bool,
    /// Stroke colour.
    pub colour: String,
    /// Tooltip.
    pub title: String,
}

/// A family's ratios to its first as a forest plot on a log axis: a line at 1, the band of
/// ratios the family could not be expected to call shaded, one interval per row.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Forest {
    /// Canvas width, px.
    pub width: f64,
    /// Canvas height, px.
    pub height: f64,
    /// Plot area: left, top, right, bottom, px.
    pub plot: (f64, f64, f64, f64),
    /// Where ratio 1 is.
    pub one: f64,
    /// The shaded band, from 1 ÷ the detectable ratio to it, clipped to the plot.
    pub band: Option<(f64, f64)>,
    /// Axis ticks (ratios).
    pub x_ticks: Vec<Tick>,
    /// One per value, in order.
    pub rows: Vec<ForestRow>,
}

/// The ratios a forest's axis spans: every forest of a page on the same axis, so that a
/// glance down the column compares families. Ratios outside are drawn to the edge with an
/// arrow.
pub const FOREST_RANGE: (f64, f64) = (0.5, 2.0);

/// `values` as a forest on [`FOREST_RANGE`], the band up to `detectable` (≥ 1) shaded.
pub fn forest(values: &[ForestValue], detectable: Option<f64>) -> Forest {
    let (row_height, width) = (9.0, 220.0);
    let plot = (6.0, 4.0, width - 6.0, 4.0 + row_height * values.len().max(1) as f64);
    let (low, high) = (FOREST_RANGE.0.ln(), FOREST_RANGE.1.ln());
    let x = |ratio: f64| {
        let clamped = ratio.max(FOREST_RANGE.0).min(FOREST_RANGE.1);
        plot.0 + (clamped.ln() - low) / (high - low) * (plot.2 - plot.0)
    };
    let rows = values
        .iter()
        .enumerate()
        .map(|(i, v)| ForestRow {
            y: plot.1 + (i as f64 + 0.5) * row_height,
            x: x(v.ratio),
            x_low: x(v.low),
            x_high: x(v.high),
            clipped_low: v.low < FOREST_RANGE.0,
            clipped_high: v.high > FOREST_RANGE.1,
            called: v.called,
            colour: v.colour.clone(),
            title: v.title.clone(),
        })
        .collect();
    let x_ticks = [0.5, 0.8, 1.0, 1.25, 2.0]
        .iter()
        .map(|&r| Tick { at: x(r), label: format!("{r}") })
        .collect();
    Forest {
        width,
        height: plot.3 + 12.0,
        plot,
        one: x(1.0),
        band: detectable.filter(|d| *d > 1.0).map(|d| (x(1.0 / d), x(d))),
        x_ticks,
        rows,
    }
}

/// The percentiles on the latency curves, and where they sit: log of 1 / (1 − p), the usual
/// HDR layout that gives the tail room.
pub const CURVE_PERCENTILES: [f64; 7] = [50.0, 75.0, 90.0, 99.0, 99.9, 99.99, 100.0];

/// A latency curve's values: `histogram` at each of [`CURVE_PERCENTILES`] (100: the max).
pub fn percentile_curve(histogram: &hdrhistogram::Histogram<u64>) -> Vec<u64> {
    CURVE_PERCENTILES
        .iter()
        .map(|p| if *p >= 100.0 { histogram.max() } else { histogram.value_at_quantile(p / 100.0) })
        .collect()
}

fn percentile_position(percentile: f64) -> f64 {
    // 100 has no finite position; place it one decade after 99.99.
    let p = if percentile >= 100.0 { 99.999 } else { percentile };
    (1.0 / (1.0 - p / 100.0)).log10()
}

/// Latency by percentile, one line per target: `curves` holds (colour, label, latency µs at
/// each of [`CURVE_PERCENTILES`]).
pub fn latency_chart(title: &str, curves: &[(String, String, Vec<u64>)]) -> LineChart {
    let (width, height) = (360.0, 250.0);
    let plot = (58.0, 24.0, width - 12.0, height - 42.0);
    let x_min = percentile_position(CURVE_PERCENTILES[0]);
    let x_max = percentile_position(CURVE_PERCENTILES[CURVE_PERCENTILES.len() - 1]);
    let x =
        |p: f64| plot.0 + (percentile_position(p) - x_min) / (x_max - x_min) * (plot.2 - plot.0);
    let axis = LatencyAxis::over(curves.iter().flat_map(|c| c.2.iter().copied()), plot);
    let y = |v: u64| axis.y(v);
    let y_ticks = axis.ticks();
    let x_ticks = CURVE_PERCENTILES
        .iter()
        .map(|&p| Tick { at: x(p), label: if p >= 100.0 { "max".into() } else { format!("{p}") } })
        .collect();
    let series = curves
        .iter()
        .map(|(colour, label, values)| Series {
            colour: colour.clone(),
            points: CURVE_PERCENTILES
                .iter()
                .zip(values)
                .map(|(&p, &v)| format!("{:.1},{:.1}", x(p), y(v)))
                .collect::<Vec<_>>()
                .join(" "),
            title: format!(
                "{label}: {}",
                CURVE_PERCENTILES
                    .iter()
                    .zip(values)
                    .map(|(p, v)| format!("p{p} {}", latency_label(*v as f64)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            dashed: false,
        })
        .collect();
    LineChart {
        width,
        height,
        plot,
        x_ticks,
        y_ticks,
        series,
        x_label: "percentile".into(),
        y_label: "latency (log)".into(),
        title: title.to_owned(),
        rules: Vec::new(),
        dots: Vec::new(),
    }
}

/// A vertical latency axis in whole decades (log), spanning the values it is made over.
struct LatencyAxis {
    decade_low: f64,
    decade_high: f64,
    /// The plot's top and bottom, px.
    top: f64,
    bottom: f64,
}

impl LatencyAxis {
    /// Over `values` (µs; zeros ignored), on `plot` (left, top, right, bottom).
    fn over(values: impl Iterator<Item = u64>, plot: (f64, f64, f64, f64)) -> Self {
        let (low, high) =
            values.filter(|v| *v > 0).fold((u64::MAX, 1u64), |(lo, hi), v| (lo.min(v), hi.max(v)));
        let decade_low = (low.max(1) as f64).log10().floor();
        let decade_high = (high as f64).log10().ceil().max(decade_low + 1.0);
        Self { decade_low, decade_high, top: plot.1, bottom: plot.3 }
    }

    fn y(&self, us: u64) -> f64 {
        let share =
            ((us.max(1) as f64).log10() - self.decade_low) / (self.decade_high - self.decade_low);
        self.bottom - share * (self.bottom - self.top)
    }

    fn ticks(&self) -> Vec<Tick> {
        (self.decade_low as i32..=self.decade_high as i32)
            .map(|d| {
                let value = 10f64.powi(d);
                Tick { at: self.y(value as u64), label: latency_label(value) }
            })
            .collect()
    }
}

/// One party's latency at each offered rate, for [`capacity_chart`].
#[derive(Debug, Clone)]
pub struct RateCurve {
    /// Its colour.
    pub colour: String,
    /// Its name.
    pub label: String,
    /// (offered requests per second, p50 µs, latency at the objective's percentile µs), by
    /// rate.
    pub points: Vec<(f64, u64, u64)>,
    /// Its capacity at the objective, requests per second, when one was found.
    pub capacity_rps: Option<f64>,
}

/// Latency against offered rate (log latency), one solid line per curve at the objective's
/// `percentile` and, with `medians`, a dashed one at p50, the objective `bound_us` as a
/// line across, each curve's capacity a dot on it.
pub fn capacity_chart(
    title: &str,
    percentile: &str,
    bound_us: u64,
    curves: &[RateCurve],
    medians: bool,
) -> LineChart {
    let (width, height) = (460.0, 280.0);
    let plot = (58.0, 24.0, width - 16.0, height - 42.0);
    let highest = curves.iter().flat_map(|c| c.points.iter().map(|p| p.0)).fold(0.0, f64::max);
    let step = nice_step(highest, 5);
    let x_max = (highest / step).ceil().max(1.0) * step;
    let x = |rate: f64| plot.0 + rate / x_max * (plot.2 - plot.0);
    let latencies = curves.iter().flat_map(|c| c.points.iter().flat_map(|p| [p.1, p.2]));
    let axis = LatencyAxis::over(latencies.chain([bound_us]), plot);
    let x_ticks = (0..=(x_max / step).round() as usize)
        .map(|i| i as f64 * step)
        .map(|rate| Tick { at: x(rate), label: short_number(rate) })
        .collect();
    let line = |points: &[(f64, u64, u64)], pick: fn(&(f64, u64, u64)) -> u64| {
        points
            .iter()
            .map(|p| format!("{:.1},{:.1}", x(p.0), axis.y(pick(p))))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let said = |points: &[(f64, u64, u64)], pick: fn(&(f64, u64, u64)) -> u64| {
        points
            .iter()
            .map(|p| format!("{} req/s: {}", short_number(p.0), latency_label(pick(p) as f64)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut series = Vec::new();
    for curve in curves {
        series.push(Series {
            colour: curve.colour.clone(),
            points: line(&curve.points, |p| p.2),
            title: format!("{} {percentile}: {}", curve.label, said(&curve.points, |p| p.2)),
            dashed: false,
        });
        if medians {
            series.push(Series {
                colour: curve.colour.clone(),
                points: line(&curve.points, |p| p.1),
                title: format!("{} p50: {}", curve.label, said(&curve.points, |p| p.1)),
                dashed: true,
            });
        }
    }
    let dots = curves
        .iter()
        .filter_map(|c| {
            let rate = c.capacity_rps?;
            Some(Dot {
                x: x(rate),
                y: axis.y(bound_us),
                colour: c.colour.clone(),
                title: format!("{}: capacity {} req/s", c.label, short_number(rate)),
            })
        })
        .collect();
    LineChart {
        width,
        height,
        plot,
        x_ticks,
        y_ticks: axis.ticks(),
        series,
        x_label: if medians {
            format!("offered (req/s); solid {percentile}, dashed p50")
        } else {
            format!("offered (req/s); {percentile}")
        },
        y_label: "latency (log)".into(),
        title: title.to_owned(),
        rules: vec![Rule {
            y: axis.y(bound_us),
            label: format!("{percentile} ≤ {}", latency_label(bound_us as f64)),
        }],
        dots,
    }
}

/// Per-second values as a sparkline 60×16 px.
pub fn sparkline(values: &[f64], unit: &str) -> Option<Sparkline> {
    if values.len() < 2 {
        return None;
    }
    let max = values.iter().copied().fold(0.0, f64::max).max(1.0);
    let step = 58.0 / (values.len() - 1) as f64;
    let points = values
        .iter()
        .enumerate()
        .map(|(i, v)| format!("{:.1},{:.1}", 1.0 + i as f64 * step, 15.0 - v / max * 14.0))
        .collect::<Vec<_>>()
        .join(" ");
    let title = values
        .iter()
        .map(|v| format!("{} {unit}", short_number(*v)))
        .collect::<Vec<_>>()
        .join(" → ");
    Some(Sparkline { points, title })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_series_of_many_gets_a_colour_of_its_own() {
        let colours: Vec<String> = (0..40).map(series_colour).collect();
        let mut distinct = colours.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), colours.len(), "{colours:?}");
        assert_eq!(colours[0], PALETTE[0]);
        assert!(colours.iter().all(|c| c.len() == 7 && c.starts_with('#') && c != CEILING_COLOUR));
    }

    #[test]
    fn steps_are_one_two_or_five_times_a_power_of_ten() {
        assert_eq!(nice_step(100.0, 5), 20.0);
        assert_eq!(nice_step(150_000.0, 5), 50_000.0);
        assert_eq!(nice_step(7.0, 5), 2.0);
        assert_eq!(nice_step(0.0, 5), 1.0);
    }

    #[test]
    fn numbers_and_latencies_read_naturally() {
        assert_eq!(short_number(154_782.0), "155k");
        assert_eq!(short_number(2_500.0), "2.5k");
        assert_eq!(short_number(3_000.0), "3k");
        assert_eq!(short_number(1_500_000.0), "1.5M");
        assert_eq!(short_number(42.0), "42");
        assert_eq!(latency_label(850.0), "850 µs");
        assert_eq!(latency_label(1_500.0), "1.5 ms");
        assert_eq!(latency_label(2_000_000.0), "2 s");
    }

    #[test]
    fn bars_stand_on_the_axis_and_the_tallest_fits() {
        let values = [
            BarValue {
                group: 0,
                slot: 0,
                value: 100.0,
                range: None,
                colour: "#000".into(),
                title: "a".into(),
            },
            BarValue {
                group: 0,
                slot: 1,
                value: 200.0,
                range: Some((150.0, 220.0)),
                colour: "#111".into(),
                title: "b".into(),
            },
        ];
        let chart = bar_chart(
            &["c=128".into()],
            2,
            &values,
            &[(0, 250.0, "ceiling".into())],
            "goodput (req/s)",
        );
        let bottom = chart.plot.3;
        for bar in &chart.bars {
            assert!((bar.y + bar.height - bottom).abs() < 1e-9, "bars end on the axis");
            assert!(bar.y >= chart.plot.1, "bars fit under the top");
        }
        assert!(chart.bars[1].height > chart.bars[0].height);
        assert!(chart.marks[0].y < chart.bars[1].y, "the ceiling is drawn above the taller bar");
        assert_eq!(chart.y_ticks[0].label, "0");
    }

    #[test]
    fn latency_curves_rise_with_the_percentile() {
        let chart = latency_chart(
            "t",
            &[("#000".into(), "s".into(), vec![100, 200, 400, 1_000, 5_000, 9_000, 10_000])],
        );
        let ys: Vec<f64> = chart.series[0]
            .points
            .split(' ')
            .map(|p| p.split(',').nth(1).unwrap().parse().unwrap())
            .collect();
        assert!(
            ys.windows(2).all(|w| w[1] <= w[0]),
            "higher latency is higher on the page: {ys:?}"
        );
        assert!(chart.y_ticks.iter().any(|t| t.label == "10 ms"));
    }

    #[test]
    fn a_capacity_chart_puts_the_objective_across_and_each_capacity_on_it() {
        let curve = |label: &str, capacity_rps| RateCurve {
            colour: "#000".into(),
            label: label.into(),
            points: vec![(1_000.0, 300, 900), (4_000.0, 600, 4_000), (8_000.0, 2_000, 40_000)],
            capacity_rps,
        };
        let chart = capacity_chart(
            "bookById",
            "p99",
            10_000,
            &[curve("a", Some(5_000.0)), curve("b", None)],
            true,
        );
        assert_eq!(chart.series.len(), 4, "a solid and a dashed line per party");
        assert_eq!(chart.series.iter().filter(|s| s.dashed).count(), 2);
        let rule = &chart.rules[0];
        assert_eq!(rule.label, "p99 ≤ 10 ms");
        assert!(chart.y_ticks.iter().any(|t| (t.at - rule.y).abs() < 1e-9), "on the 10 ms tick");
        assert_eq!(chart.dots.len(), 1, "only a found capacity is marked");
        let dot = &chart.dots[0];
        assert_eq!(dot.y, rule.y);
        let (left, right) = (chart.plot.0, chart.plot.2);
        assert!(left < dot.x && dot.x < right);
        // The ticks run from 0 past the highest rate offered, so every point lies inside.
        assert_eq!(chart.x_ticks[0].label, "0");
        let last: f64 = chart.series[0]
            .points
            .rsplit(' ')
            .next()
            .and_then(|p| p.split(',').next())
            .unwrap()
            .parse()
            .unwrap();
        assert!(last <= right + 1e-9, "{last} ≤ {right}");
    }

    #[test]
    fn a_forest_puts_one_in_the_middle_and_clips_what_runs_past_its_edges() {
        let value = |ratio: f64, low: f64, high: f64| ForestValue {
            ratio,
            low,
            high,
            called: high < 1.0,
            colour: "#000".into(),
            title: String::new(),
        };
        let f = forest(&[value(0.8, 0.7, 0.9), value(1.0, 0.3, 3.0)], Some(1.25));
        let middle = (f.plot.0 + f.plot.2) / 2.0;
        assert!((f.one - middle).abs() < 1e-9, "a log axis from 1/2 to 2 centres 1");
        let (left, right) = f.band.unwrap();
        assert!((f.one - left - (right - f.one)).abs() < 1e-9, "1/d and d lie alike about 1");
        let (first, second) = (&f.rows[0], &f.rows[1]);
        assert!(first.x_low < first.x && first.x < first.x_high && first.x_high < f.one);
        assert!(first.called && !first.clipped_low && !first.clipped_high);
        assert!(second.clipped_low && second.clipped_high && !second.called);
        assert_eq!((second.x_low, second.x_high), (f.plot.0, f.plot.2));
        assert!(first.y < second.y && second.y < f.plot.3);
        assert!(forest(&[], None).band.is_none());
    }

    #[test]
    fn sparklines_need_two_points() {
        assert!(sparkline(&[5.0], "req/s").is_none());
        let line = sparkline(&[10.0, 20.0, 15.0], "req/s").unwrap();
        assert_eq!(line.points.split(' ').count(), 3);
        assert_eq!(line.title, "10 req/s → 20 req/s → 15 req/s");
    }
}
