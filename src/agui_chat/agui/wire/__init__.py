"""What the AG-UI client and server share: the event schema and its kinds, SSE framing, stream
verification, chunk expansion, shims for older protocol eras, and our messages in the wire
shape. Neither side owns it; it imports neither side."""
