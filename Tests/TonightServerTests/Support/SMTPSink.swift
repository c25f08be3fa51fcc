import Crypto
import Foundation
import SwiftASN1
import Testing
import X509

@testable import TonightServer

#if canImport(Glibc)
    import Glibc
#endif

/// A real SMTP server for a test: `Tests/Mail/smtp_sink.py` (PyPI's aiosmtpd) from the package's
/// `.venv`, on a free loopback port, storing what it accepts as JSON files in its own folder.
/// Optional STARTTLS (a fresh self-signed certificate for 127.0.0.1, its PEM in ``caFile``) and
/// AUTH (user `tonight`, password `sink-secret`).
///
/// Without aiosmtpd the tests skip, unless `TONIGHT_TEST_REQUIRE_SMTP` is set (scripts/test sets
/// it after installing aiosmtpd), when they fail.
final class SMTPSink: @unchecked Sendable {
    static let user = "tonight"
    static let password = "sink-secret"

    let port: Int
    let directory: URL
    /// The certificate the sink presents, as a PEM file (nil without TLS).
    let caFile: String?
    private let process: Process

    private init(port: Int, directory: URL, caFile: String?, process: Process) {
        self.port = port
        self.directory = directory
        self.caFile = caFile
        self.process = process
    }

    static let python = MotoServer.packageRoot + "/.venv/bin/python3"
    static let script = MotoServer.packageRoot + "/Tests/Mail/smtp_sink.py"

    /// Whether aiosmtpd is there; records an issue when it is required and missing.
    static let available: Bool = {
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: python)
        probe.arguments = ["-c", "import aiosmtpd"]
        probe.standardOutput = FileHandle.nullDevice
        probe.standardError = FileHandle.nullDevice
        let found =
            (try? probe.run()) != nil
            && {
                probe.waitUntilExit(); return probe.terminationStatus == 0
            }()
        if !found { print("⚠️ Skipping SMTP tests: no aiosmtpd in \(python)") }
        return found
    }()

    /// Runs `body` with a sink, or skips (failing when `TONIGHT_TEST_REQUIRE_SMTP` is set).
    static func with(
        tls: Bool = false, auth: Bool = false, _ body: (SMTPSink) async throws -> Void
    ) async throws {
        guard available else {
            if ProcessInfo.processInfo.environment["TONIGHT_TEST_REQUIRE_SMTP"] != nil {
                Issue.record("aiosmtpd is required (TONIGHT_TEST_REQUIRE_SMTP) but \(python) cannot import it")
            }
            return
        }
        let sink = try await start(tls: tls, auth: auth)
        defer { sink.stop() }
        try await body(sink)
    }

    private static func start(tls: Bool, auth: Bool) async throws -> SMTPSink {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("smtp-sink-\(UUID().uuidString)")
        let mail = directory.appendingPathComponent("mail")
        try FileManager.default.createDirectory(at: mail, withIntermediateDirectories: true)
        var arguments = [script, "--dir", mail.path]
        var caFile: String?
        if tls {
            let (certificate, key) = try selfSignedPEM()
            let cert = directory.appendingPathComponent("cert.pem").path
            let keyFile = directory.appendingPathComponent("key.pem").path
            try certificate.write(toFile: cert, atomically: true, encoding: .utf8)
            try key.write(toFile: keyFile, atomically: true, encoding: .utf8)
            arguments += ["--cert", cert, "--key", keyFile]
            caFile = cert
        }
        if auth { arguments += ["--user", user, "--password", password] }
        let output = directory.appendingPathComponent("stdout")
        FileManager.default.createFile(atPath: output.path, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = arguments
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("PORT ") }),
                let port = Int(line.dropFirst(5))
            {
                return SMTPSink(port: port, directory: mail, caFile: caFile, process: process)
            }
            guard process.isRunning else { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        process.terminate()
        throw ConfigurationError("the SMTP sink did not start")
    }

    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory.deletingLastPathComponent())
    }

    /// One message the sink accepted.
    struct Received: Sendable {
        var from: String
        var to: [String]
        var data: String
        var auth: String?
        var tls: Bool
    }

    /// The messages accepted so far, in order.
    func messages() -> [Received] {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
            .filter { $0.first?.isNumber == true && $0.hasSuffix(".json") }.sorted()
        return names.compactMap { name in
            guard let data = try? Data(contentsOf: directory.appendingPathComponent(name)),
                let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
            else { return nil }
            return Received(
                from: object["mail_from"] as? String ?? "", to: object["rcpt_tos"] as? [String] ?? [],
                data: object["data"] as? String ?? "", auth: object["auth"] as? String,
                tls: object["tls"] as? Bool ?? false)
        }
    }
}

/// The text part of a rendered mail with quoted-printable soft breaks removed (enough to read
/// links and words; `=XX` escapes stay).
func mailText(_ raw: String) -> String {
    raw.replacingOccurrences(of: "=\r\n", with: "").replacingOccurrences(of: "=\n", with: "")
}

/// The token of the first `#/<screen>/<token>` link in a mail.
func mailToken(_ raw: String, screen: String) -> String? {
    let text = mailText(raw)
    guard let range = text.range(of: "#/\(screen)/") else { return nil }
    let token = text[range.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }
    return token.isEmpty ? nil : String(token)
}

/// A self-signed P-256 certificate for 127.0.0.1 / localhost and its key, as PEM.
func selfSignedPEM() throws -> (certificate: String, key: String) {
    let key = P256.Signing.PrivateKey()
    let name = try DistinguishedName { CommonName("localhost") }
    let now = Date()
    let certificate = try Certificate(
        version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey),
        notValidBefore: now - 3600, notValidAfter: now + 86_400,
        issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
        extensions: try Certificate.Extensions {
            Critical(BasicConstraints.notCertificateAuthority)
            SubjectAlternativeNames([
                .dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1])),
            ])
        },
        issuerPrivateKey: .init(key)
    )
    return (try certificate.serializeAsPEM().pemString, key.pemRepresentation)
}
