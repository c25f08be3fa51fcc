/// The PostgreSQL counterpart of ``FeedVersion``: instead of a counter row (which every instance
/// would update on every vote), triggers send a notification on the live channel
/// (`tonight_live`, see ``PostgresFanout``) from each transaction that changes what an anonymous
/// feed page shows — `feed` — or the artists that suggestions search — `artists`. PostgreSQL
/// delivers it at commit, once per transaction, to every listening instance, whoever wrote (an
/// instance, a background job, a CLI import), and each instance then drops what it had cached.
///
/// The feed triggers are row triggers, so a statement that changes nothing (a sweep that finds no
/// expired post) drops no cache; PostgreSQL keeps one notification per transaction however many
/// rows call it. Artists change only by import, in bulk: one statement trigger each.
///
/// PostgreSQL only; the tables and columns are those of SQLite's feed-version triggers.
struct FeedChangeNotify: Migration {
    let name = "0028_feed_change_notify"

    func statements(for kind: DatabaseKind) -> [String] {
        guard kind == .postgres else { return [] }
        func notify(_ name: String, _ event: String, on table: String, when: String? = nil) -> String {
            """
            CREATE TRIGGER \(name) AFTER \(event) ON \(table) FOR EACH ROW \(when.map { "WHEN (\($0)) " } ?? "")\
            EXECUTE FUNCTION tonight_notify_change('feed')
            """
        }
        func changed(_ columns: [String]) -> String {
            columns.map { "OLD.\($0) IS DISTINCT FROM NEW.\($0)" }.joined(separator: " OR ")
        }
        return [
            """
            CREATE FUNCTION tonight_notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                PERFORM pg_notify('tonight_live', TG_ARGV[0]);
                RETURN NULL;
            END
            $$
            """,
            notify("feed_posts", "INSERT OR UPDATE OR DELETE", on: "posts"),
            notify("feed_tags", "INSERT OR DELETE", on: "post_tags"),
            notify("feed_places", "UPDATE OF name", on: "places", when: changed(["name"])),
            notify(
                "feed_users", "UPDATE OF username, display_name, show_name_on_posts, avatar_url", on: "users",
                when: changed(["username", "display_name", "show_name_on_posts", "avatar_url"])),
            notify("feed_comments", "INSERT OR DELETE", on: "comments"),
            notify("feed_ads", "INSERT OR UPDATE OR DELETE", on: "ads"),
            notify("feed_bans", "INSERT OR DELETE", on: "bans"),
            """
            CREATE TRIGGER suggest_artists AFTER INSERT OR UPDATE OR DELETE ON artists FOR EACH STATEMENT
            EXECUTE FUNCTION tonight_notify_change('artists')
            """,
        ]
    }
}
