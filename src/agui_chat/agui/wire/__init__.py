"""What the AG-UI client and server share: the event schema and its kinds, shims for older
protocol eras, run tracing, and our messages in the wire shape. Neither side owns it; it
imports neither side."""
