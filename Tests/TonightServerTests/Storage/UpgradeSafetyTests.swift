import Testing

@testable import TonightServer

/// Rolling upgrades (docs/operations.md): the first new instance migrates the database while
/// instances of the previous release still serve from it, so a migration may only expand the
/// schema. Removing or changing what the previous release reads waits for a later release, and is
/// listed here on purpose.
@Suite("Upgrade safety")
struct UpgradeSafetyTests {
    /// The migrations that shipped before this rule; they ran long ago everywhere.
    static let before = "0030"
    /// Contracting migrations made on purpose, a release after the code stopped reading what they remove.
    static let allowedContractions: Set<String> = []

    @Test("migrations only add tables, nullable or defaulted columns, indexes and triggers")
    func migrationsOnlyExpand() {
        let contracting = [
            "DROP TABLE", "DROP COLUMN", "RENAME", "ALTER COLUMN", "SET NOT NULL", "DROP VIEW", "TRUNCATE",
        ]
        for migration in Migrations.all
        where migration.name >= Self.before && !Self.allowedContractions.contains(migration.name) {
            for kind in [DatabaseKind.sqlite, .postgres] {
                for statement in migration.statements(for: kind) {
                    let upper = statement.uppercased()
                    for word in contracting {
                        #expect(!upper.contains(word), "\(migration.name) (\(kind)): \(word) breaks running instances")
                    }
                    if upper.contains("ADD COLUMN"), upper.contains("NOT NULL") {
                        #expect(upper.contains("DEFAULT"), "\(migration.name): a NOT NULL column needs a DEFAULT")
                    }
                }
            }
        }
    }
}
