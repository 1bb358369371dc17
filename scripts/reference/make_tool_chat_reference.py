#!/usr/bin/env python3
"""Renders the tool-use chat templates of tests/data/chat_templates with Python's jinja2,
set up as transformers' apply_chat_template (ImmutableSandboxedEnvironment, trim_blocks,
lstrip_blocks, loopcontrols, tojson as json.dumps(ensure_ascii=False), raise_exception,
strftime_now; tools=None and documents=None when absent), for conversations with tools,
tool calls and tool results, and writes tests/data/chat_templates/tool_reference.json:
[{template, case, messages, tools, tokens, output} or {..., error}].

Messages are written as OpenAI clients send them (arguments a JSON string), except that an
assistant message with tool_calls and no text has content "" rather than null, as baton
passes it (Qwen3 and Granite 3.3 fail on None; no template here renders the two apart).
They reach the template as transformers documents them: arguments parsed into a dict; a
template that fails on a dict (TypeError: it concatenates the arguments as text) is
rendered again with the arguments' strings, as baton does.
  python3 scripts/reference/make_tool_chat_reference.py
"""
import copy
import json
import os

import jinja2
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

FOLDER = os.path.join(os.path.dirname(__file__), '..', '..', 'tests', 'data', 'chat_templates')

TOKENS = {
    'qwen3': {'eos_token': '<|im_end|>'},
    'llama3.2': {'bos_token': '<|begin_of_text|>', 'eos_token': '<|eot_id|>',
                 'date_string': '26 Jul 2024'},
    'granite3.3': {'bos_token': '<|end_of_text|>', 'eos_token': '<|end_of_text|>'},
    'mistral-nemo': {'bos_token': '<s>', 'eos_token': '</s>'},
    'mistral-7b-v0.3': {'bos_token': '<s>', 'eos_token': '</s>'},
    'deepseek-v3.1': {'bos_token': '<｜begin▁of▁sentence｜>', 'eos_token': '<｜end▁of▁sentence｜>'},
    'hermes3-tool-use': {'bos_token': '<|begin_of_text|>', 'eos_token': '<|im_end|>'},
    'functionary-v3.1': {'bos_token': '<|begin_of_text|>', 'eos_token': '<|eot_id|>'},
}

WEATHER = {'type': 'function', 'function': {
    'name': 'get_weather', 'description': 'Get the weather in a city',
    'parameters': {'type': 'object', 'properties': {
        'city': {'type': 'string', 'description': 'The city'},
        'unit': {'type': 'string', 'enum': ['celsius', 'fahrenheit']}},
        'required': ['city']}}}
TIME = {'type': 'function', 'function': {
    'name': 'get_time', 'description': 'The time "now" in a zone',
    'parameters': {'type': 'object', 'properties': {'zone': {'type': 'string'}}}}}


def call(call_id, name, arguments):
    return {'id': call_id, 'type': 'function', 'function': {'name': name, 'arguments': arguments}}


def result(call_id, name, content):
    return {'role': 'tool', 'tool_call_id': call_id, 'name': name, 'content': content}


ASK = {'role': 'user', 'content': 'Weather in Oslo?'}
ONE_CALL = {'role': 'assistant', 'content': '',
            'tool_calls': [call('call12345', 'get_weather', '{"city": "Oslo"}')]}
CASES = [
    ('tools and a question', [{'role': 'system', 'content': 'Be brief.'}, ASK], [WEATHER, TIME]),
    ('a call and its result', [ASK, ONE_CALL, result('call12345', 'get_weather', '{"temp": 3}')],
     [WEATHER]),
    ('two calls in one turn', [ASK, {'role': 'assistant', 'content': '', 'tool_calls': [
        call('call12345', 'get_weather', '{"city": "Oslo", "unit": "celsius"}'),
        call('call67890', 'get_time', '{"zone": "Europe/Oslo"}')]},
        result('call12345', 'get_weather', '{"temp": 3}'),
        result('call67890', 'get_time', '12:00')], [WEATHER, TIME]),
    ('text beside a call, then the answer', [ASK, {'role': 'assistant', 'content': 'Let me look.',
        'tool_calls': [call('call12345', 'get_weather', '{"city": "Oslo"}')]},
        result('call12345', 'get_weather', '{"temp": 3}'),
        {'role': 'assistant', 'content': 'It is 3 degrees.'},
        {'role': 'user', 'content': 'Thanks!'}], [WEATHER]),
    ('a call in the history without tools', [ASK, ONE_CALL,
        result('call12345', 'get_weather', '{"temp": 3}')], None),
]


def strftime_now(fmt):
    import datetime
    return datetime.datetime(2026, 12, 4, 12, 0).strftime(fmt)


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def environment():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[loopcontrols])
    env.filters['tojson'] = lambda x, indent=None, separators=None, sort_keys=False: json.dumps(
        x, ensure_ascii=False, indent=indent, separators=separators, sort_keys=sort_keys)
    env.globals['raise_exception'] = raise_exception
    env.globals['strftime_now'] = strftime_now
    return env


def with_dict_arguments(messages):
    out = copy.deepcopy(messages)
    for m in out:
        for c in m.get('tool_calls') or []:
            c['function']['arguments'] = json.loads(c['function']['arguments'])
    return out


def render(template, messages, tools, tokens):
    variables = dict(tokens, tools=tools, documents=None, add_generation_prompt=True)
    try:
        return template.render(messages=with_dict_arguments(messages), **variables)
    except TypeError:
        return template.render(messages=copy.deepcopy(messages), **variables)


def main():
    env = environment()
    entries = []
    for name, tokens in TOKENS.items():
        with open(os.path.join(FOLDER, name + '.jinja'), encoding='utf-8') as f:
            template = env.from_string(f.read())
        for case, messages, tools in CASES:
            entry = {'template': name, 'case': case, 'messages': messages, 'tools': tools,
                     'tokens': tokens}
            try:
                entry['output'] = render(template, messages, tools, tokens)
            except (jinja2.exceptions.TemplateError, TypeError) as error:
                entry['error'] = type(error).__name__ + ': ' + str(error)
            entries.append(entry)
    with open(os.path.join(FOLDER, 'tool_reference.json'), 'w', encoding='utf-8') as f:
        json.dump(entries, f, ensure_ascii=False, indent=1)
        f.write('\n')


main()
