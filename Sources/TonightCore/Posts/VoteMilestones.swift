/// When a post's author hears about likes: at the first, then at 10, 50, 100, 500, 1000, 5000… —
/// never once per vote (a hot post gets thousands a minute).
public enum VoteMilestones {
    /// The highest milestone in `(old, new]`, if the count crossed one.
    public static func crossed(from old: Int64, to new: Int64) -> Int64? {
        guard new > old else { return nil }
        var milestone: Int64 = 1
        var best: Int64?
        var step = 0
        while milestone <= new {
            if milestone > old { best = milestone }
            milestone = step == 0 ? 10 : (step % 2 == 1 ? milestone * 5 : milestone * 2)
            step += 1
        }
        return best
    }
}
