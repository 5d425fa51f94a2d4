"""``AGUIChatClient`` and what it stands on (transport, SSE, the event pipeline, updates,
resume, dialects, the thread reducer); its public names live in ``agui_chat.agui``."""
