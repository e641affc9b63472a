"""ferrule-gemini: Google Gemini models through the Gemini API's streamGenerateContent,
as the `gemini_language_model` component type."""
