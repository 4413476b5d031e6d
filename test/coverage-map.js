// Every test file counts towards the coverage of the whole library.
export default () => ['lib/**/*.ts']
