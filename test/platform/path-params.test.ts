import assert from 'node:assert/strict';
import { AnySchema, ValidationError } from 'yup';
import { idParams, pathParams } from '../../api/plugins/path-params';
import { issuesOf, yupValidatorCompiler } from '../../api/plugins/validation';

/** What yup alone answers for `data` as a path: the cast value, or the issues of its refusal. */
function yupAlone(schema: AnySchema, data: unknown) {
  try {
    return { value: schema.validateSync(data, { abortEarly: false }) };
  } catch (err) {
    return { issues: issuesOf(err as ValidationError) };
  }
}

describe('path ids: a quick check before yup, yup for every refusal', () => {
  const two = pathParams('id', 'itemId');
  const cases: Array<[string, AnySchema, unknown]> = [
    ['an id', idParams, { id: 'plc_1k8g2' }],
    ['an id of 100 characters', idParams, { id: 'x'.repeat(100) }],
    ['an id of 101 characters', idParams, { id: 'x'.repeat(101) }],
    ['an empty id', idParams, { id: '' }],
    ['no id', idParams, {}],
    ['an extra parameter', idParams, { id: 'a', other: 'b' }],
    ['a number', idParams, { id: 5 }],
    ['two ids', two, { id: 'a', itemId: 'b' }],
    ['two ids, one too long', two, { id: 'a', itemId: 'y'.repeat(101) }],
  ];
  for (const [name, schema, data] of cases) {
    it(`${name}: the same answer as yup alone`, () => {
      const answer = yupValidatorCompiler({ schema, httpPart: 'params' })(data);
      const alone = yupAlone(schema, data);
      if ('issues' in alone) {
        assert.ok(answer.error, 'refused');
        assert.deepEqual((answer.error as unknown as { details: unknown }).details, alone.issues);
      } else {
        assert.deepEqual(answer.value, alone.value);
      }
    });
  }

  it('valid ids are accepted without calling yup; anything else is yup\'s to answer', () => {
    const schema = pathParams('id', 'itemId');
    let yupCalls = 0;
    const validateSync = schema.validateSync.bind(schema);
    schema.validateSync = ((...args: Parameters<typeof validateSync>) => {
      yupCalls++;
      return validateSync(...args);
    }) as typeof schema.validateSync;
    const validate = yupValidatorCompiler({ schema, httpPart: 'params' });
    const data = { id: 'plc_1k8g2', itemId: 'pit_1' };
    assert.equal(validate(data).value, data);
    assert.equal(yupCalls, 0);
    assert.ok(validate({ id: 'plc_1k8g2', itemId: '' }).error);
    assert.equal(yupCalls, 1);
  });
});
