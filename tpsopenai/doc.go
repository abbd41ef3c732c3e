// Package tpsopenai meters streams of the official OpenAI Go client,
// github.com/openai/openai-go/v3: Chat Completions chunks and Responses API
// events.
//
// The constructors take the client's own NewStreaming method, so that the
// meter's start time is taken before the request is sent (openai-go's
// NewStreaming returns only after the response headers arrived):
//
//	m := tpsmeter.New()
//	client := openai.NewClient(option.WithMiddleware(m.Middleware))
//	stream := tpsopenai.NewChatStream(ctx, m, client.Chat.Completions.NewStreaming, params)
//	for stream.Next() {
//		chunk := stream.Current() // unchanged
//		_ = chunk
//	}
//	err := stream.Err() // unchanged
//	res, _ := stream.Result()
//
// What is counted: Chat Completions delta.content (visible text),
// delta.refusal, tool-call names and arguments (per choice and per tool
// call), and third-party reasoning deltas (reasoning_content, reasoning)
// apart; n>1 choices are counted per choice. Responses API: output text,
// refusal, function-call arguments and custom tool input deltas as output;
// reasoning text and reasoning summary deltas as reasoning; audio deltas are
// never counted as text. Server usage is taken from the usage chunk (or
// x_groq.usage) and from response.completed, response.incomplete and
// response.failed.
//
// This package lives apart from the root package so that applications that
// do not use openai-go do not compile it.
package tpsopenai
