"""Schemathesis hooks for the fuzz step of scripts/test (loaded through SCHEMATHESIS_HOOKS).

tus's PATCH body (`application/offset+octet-stream`, /v1/uploads/{uploadId}) is raw bytes, which
schemathesis has no serializer for: it is sent as `application/octet-stream` bodies are.
"""
import schemathesis

schemathesis.serializer.alias("application/offset+octet-stream", "application/octet-stream")
