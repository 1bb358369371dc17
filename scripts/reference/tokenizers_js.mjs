// Reads {"tokenizer": <tokenizer.json>, "config": <tokenizer_config.json>, "texts": [...]}
// on stdin; writes [{"text", "ids", "ids_with_special", "decoded"}] to stdout, made by
// Hugging Face's tokenizers.js. decoded: the ids decoded as transformers does, keeping
// special tokens, with no clean-up of spaces.
import { Tokenizer } from '@huggingface/tokenizers';

let input = '';
for await (const chunk of process.stdin) input += chunk;
const { tokenizer, config, texts } = JSON.parse(input);
const tok = new Tokenizer(tokenizer, config);
const out = texts.map((text) => {
  const ids = tok.encode(text, { add_special_tokens: false }).ids;
  return {
    text,
    ids,
    ids_with_special: tok.encode(text, { add_special_tokens: true }).ids,
    decoded: ids.length === 0 ? ''
      : tok.decode(ids, { skip_special_tokens: false, clean_up_tokenization_spaces: false }),
  };
});
process.stdout.write(JSON.stringify(out));
