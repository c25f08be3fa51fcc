import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import TonightServer

/// Against a real SMTP server (aiosmtpd, ``SMTPSink``).
@Suite("SMTP: delivery to a real server, retries and refusals through the outbox")
struct SMTPTests {
    private func message(to: String, name: String = "Zoë", text: String = "Hello\n.dot line\n") -> MailMessage {
        MailMessage(
            from: MailAddress(address: "no-reply@tonight.example", name: "Tonight"),
            to: MailAddress(address: to, name: name), subject: "Grüße", text: text, html: "<p>Hello</p>",
            messageID: "\(UUID().uuidString)@tonight.example")
    }

    @Test("STARTTLS, then AUTH: the message arrives as rendered, under TLS, with the login")
    func startTLSAndAuth() async throws {
        try await SMTPSink.with(tls: true, auth: true) { sink in
            let client = try SMTPClient(
                configuration: SMTPConfiguration(
                    host: "127.0.0.1", port: sink.port, security: .startTLS, username: SMTPSink.user,
                    password: SMTPSink.password, caFile: sink.caFile))
            let sent = message(to: "zoe@example.com")
            let answer = try await client.send(sent)
            #expect(answer.contains("queued"))
            let received = try #require(sink.messages().first)
            #expect(received.tls)
            #expect(received.auth == SMTPSink.user)
            #expect(received.from == "no-reply@tonight.example")
            #expect(received.to == ["zoe@example.com"])
            // Dots unstuffed by the server: byte for byte what was rendered.
            #expect(received.data == sent.rendered())
        }
    }

    @Test("an untrusted certificate, a wrong password and no STARTTLS with a login all fail")
    func refusals() async throws {
        try await SMTPSink.with(tls: true, auth: true) { sink in
            let untrusted = try SMTPClient(
                configuration: SMTPConfiguration(
                    host: "127.0.0.1", port: sink.port, security: .startTLS, username: SMTPSink.user,
                    password: SMTPSink.password))
            await #expect(throws: (any Error).self) { try await untrusted.send(message(to: "a@example.com")) }
            let wrong = try SMTPClient(
                configuration: SMTPConfiguration(
                    host: "127.0.0.1", port: sink.port, security: .startTLS, username: SMTPSink.user,
                    password: "wrong", caFile: sink.caFile))
            do {
                try await wrong.send(message(to: "a@example.com"))
                Issue.record("a wrong password was accepted")
            } catch let error as SMTPError {
                #expect(error == .reply(command: "AUTH", code: 535, text: error.replyText))
                // The server's configuration, not this message: retried until an operator fixes it.
                #expect(!error.isPermanent)
            }
            #expect(sink.messages().isEmpty)
        }
        try await SMTPSink.with(tls: false, auth: true) { sink in
            let client = try SMTPClient(
                configuration: SMTPConfiguration(
                    host: "127.0.0.1", port: sink.port, security: .startTLS, username: SMTPSink.user,
                    password: SMTPSink.password))
            await #expect(throws: SMTPError.cannotAuthenticate("the server offers no STARTTLS")) {
                try await client.send(message(to: "a@example.com"))
            }
            #expect(sink.messages().isEmpty)
        }
    }

    @Test("a server slower than the deadline: the attempt fails as transient")
    func deadline() async throws {
        try await SMTPSink.with { sink in
            var configuration = SMTPConfiguration(host: "127.0.0.1", port: sink.port, security: .startTLS)
            configuration.timeout = .seconds(1)
            let client = try SMTPClient(configuration: configuration)
            // The sink takes the message after 3 s: only the deadline makes this attempt fail.
            do {
                try await client.send(message(to: "slow@example.com"))
                Issue.record("the slow server's answer was awaited")
            } catch let error as SMTPError {
                #expect(error == .connectionClosed)
                #expect(!error.isPermanent)
            }
        }
    }

    @Test("through the outbox: a 4xx is retried until taken, a 5xx gives the job up with the reason")
    func outbox() async throws {
        try await SMTPSink.with { sink in
            try await withApp(.sqlite, configure: { $0.smtpURL = "smtp://127.0.0.1:\(sink.port)" }) {
                services, client in
                for name in ["flaky2", "reject"] {
                    let signUp = try await client.send(
                        .post, "/v1/auth/signup",
                        json: [
                            "username": name, "email": "\(name)@example.com", "password": "a long enough passphrase",
                        ])
                    #expect(signUp.status == .created)
                }
                let worker = JobWorker(queue: services.jobs, handlers: services.jobHandlers, logger: services.logger)
                var now = Date()
                #expect(try await worker.runOnce(now: now) == 2)
                var jobs = try await mailJobs(services)
                #expect(jobs.count == 2)
                let flaky = try #require(jobs.first { $0.state == "queued" })
                #expect(flaky.attempts == 1)
                #expect(flaky.error?.contains("RCPT: 451") == true)
                let rejected = try #require(jobs.first { $0.state == "dead" })
                #expect(rejected.attempts == 1)
                #expect(rejected.error?.contains("given up: RCPT: 550") == true)
                // The backoff passes; the second 451, then the third attempt is taken.
                for _ in 0..<2 {
                    now = now.addingTimeInterval(3600)
                    #expect(try await worker.runOnce(now: now) == 1)
                }
                jobs = try await mailJobs(services)
                #expect(jobs.map(\.state) == ["dead"])
                let delivered = sink.messages()
                #expect(delivered.map(\.to) == [["flaky2@example.com"]])
                #expect(mailToken(delivered[0].data, screen: "verify-email") != nil)
            }
        }
    }

    private struct MailJobRow {
        var state: String
        var attempts: Int
        var error: String?
    }

    private func mailJobs(_ services: AppServices) async throws -> [MailJobRow] {
        try await services.database.sql.raw(
            "SELECT state, attempts, last_error FROM jobs WHERE kind = \(bind: MailJob.kind) ORDER BY state"
        ).all().map {
            MailJobRow(
                state: try $0.decode(column: "state", as: String.self),
                attempts: try $0.decode(column: "attempts", as: Int.self),
                error: try $0.decode(column: "last_error", as: String?.self))
        }
    }
}

extension SMTPError {
    /// The server's text of a reply error (for comparing the rest).
    fileprivate var replyText: String {
        if case .reply(_, _, let text) = self { return text }
        return ""
    }
}
